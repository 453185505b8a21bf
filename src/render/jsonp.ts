import { badRequest } from '../errors.js';
import type { DocumentWriter } from './document.js';
import { jsonDocument } from './json.js';

/** The callback used when the request names none (`?format=jsonp` alone). */
export const DEFAULT_JSONP_CALLBACK = 'callback';

const MAX_CALLBACK_LENGTH = 128;

/** One ASCII identifier; dotted paths (`jQuery123.cb`) are split on '.' before this test. */
const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/**
 * Reserved words, literals and a few globals that must never be "called" with our data:
 * `callback=eval` or `callback=new` would turn the response into something other than a
 * function call on the JSON.
 */
const REFUSED_NAMES: ReadonlySet<string> = new Set([
  'break',
  'case',
  'catch',
  'class',
  'const',
  'continue',
  'debugger',
  'default',
  'delete',
  'do',
  'else',
  'enum',
  'export',
  'extends',
  'false',
  'finally',
  'for',
  'function',
  'if',
  'import',
  'in',
  'instanceof',
  'new',
  'null',
  'return',
  'super',
  'switch',
  'this',
  'throw',
  'true',
  'try',
  'typeof',
  'var',
  'void',
  'while',
  'with',
  'yield',
  'let',
  'static',
  'implements',
  'interface',
  'package',
  'private',
  'protected',
  'public',
  'await',
  'async',
  'of',
  'arguments',
  'eval',
  'undefined',
  'NaN',
  'Infinity',
]);

/**
 * Globals whose members run or load code, navigate, or write into the page when called with our
 * JSON (`document.write(...)`, `Function(...)`, `location.assign(...)`): refused as the first
 * segment of a callback. A page's own callback is its own function or object, never one of these.
 */
const REFUSED_ROOTS: ReadonlySet<string> = new Set([
  'document',
  'window',
  'self',
  'top',
  'parent',
  'frames',
  'opener',
  'globalThis',
  'global',
  'location',
  'history',
  'navigator',
  'Function',
  'AsyncFunction',
  'GeneratorFunction',
  'Reflect',
  'Proxy',
  'Object',
  'setTimeout',
  'setInterval',
  'setImmediate',
  'queueMicrotask',
  'open',
  'importScripts',
  'postMessage',
  'fetch',
  'XMLHttpRequest',
  'WebSocket',
  'Worker',
  'SharedWorker',
  'alert',
  'confirm',
  'prompt',
  'execScript',
  'require',
  'process',
  'module',
]);

/** Members every object or function has, through which a path reaches the Function constructor. */
const REFUSED_MEMBERS: ReadonlySet<string> = new Set([
  'constructor',
  '__proto__',
  'prototype',
  '__defineGetter__',
  '__defineSetter__',
  '__lookupGetter__',
  '__lookupSetter__',
  'call',
  'apply',
  'bind',
]);

/**
 * A JSONP callback is pasted into a script, so only a dotted path of plain ASCII identifiers is
 * accepted (at most 128 characters, no reserved word in any segment, no code-running global at
 * its root and no prototype member anywhere); callers answer 400 for anything else.
 */
export function isValidJsonpCallback(name: string): boolean {
  if (typeof name !== 'string' || name.length === 0 || name.length > MAX_CALLBACK_LENGTH) return false;
  const segments = name.split('.');
  if (REFUSED_ROOTS.has(segments[0] as string)) return false;
  return segments.every((segment) => IDENTIFIER.test(segment) && !REFUSED_NAMES.has(segment) && !REFUSED_MEMBERS.has(segment));
}

/** The callback `name` (the request's `callback` parameter; the default when absent), or a 400 for an unsafe one. */
export function checkJsonpCallback(name: unknown = DEFAULT_JSONP_CALLBACK): string {
  if (typeof name !== 'string' || !isValidJsonpCallback(name)) {
    throw badRequest(
      'invalid_callback',
      'The "callback" parameter must be a plain JavaScript identifier (letters, digits, _, $ and dots).',
    );
  }
  return name;
}

/**
 * U+2028/U+2029 are legal inside JSON strings but were line terminators in JavaScript before
 * ES2019, so older engines would choke on the script. They can only occur inside string literals
 * of the JSON text, where the \u escape means the same character.
 */
export function escapeLineSeparators(text: string): string {
  return text.replace(/[\u2028\u2029]/g, (char) => (char === '\u2028' ? '\\u2028' : '\\u2029'));
}

/**
 * `/**\/callback(<json>);` — the leading empty comment keeps the first bytes of the response out
 * of the attacker's control (the Rosetta Flash defence). The callback must already be validated.
 */
export function jsonpDocument(callback: string): DocumentWriter {
  const prefix = `/**/${callback}(`;
  const suffix = ');';
  return {
    whole: (value) => prefix + escapeLineSeparators(jsonDocument.whole(value)) + suffix,
    envelopeOpen: (head) => prefix + escapeLineSeparators(jsonDocument.envelopeOpen(head)),
    envelopeRecord: (record, index) => escapeLineSeparators(jsonDocument.envelopeRecord(record, index)),
    envelopeRecordJson: (json, index) => escapeLineSeparators((index === 0 ? '' : ',') + json),
    envelopeClose: (count) => escapeLineSeparators(jsonDocument.envelopeClose(count)) + suffix,
  };
}
