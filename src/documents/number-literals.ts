/**
 * Record bodies as JSON text, parsed so that a number keeps the BSON type its literal asks for,
 * as MongoDB's own Extended JSON parsers read relaxed JSON:
 * - a literal with a fraction or an exponent (`3.0`, `1e3`, `-0.0`) is a double;
 * - an integer literal is an int32, an int64 beyond int32, a double beyond int64.
 * JSON.parse forgets how a number was written (`3.0` and `3` are both the number 3, which the
 * driver stores as an int32). Two steps recover it:
 * - Whole doubles (`3.0`, `1e3`) are rewritten, before JSON.parse sees them, into the canonical
 *   Extended JSON that says the same thing (`{"$numberDouble": "3.0"}`), and extended-json.ts
 *   revives them with every other wrapper. A literal whose value is not whole (`2.5`) is left
 *   alone: the driver stores that number as a double anyway. Only literals with a fraction or an
 *   exponent are looked at, found by a regular expression that skips strings and integers.
 * - After JSON.parse, every integer beyond int32 in the value can only have come from an integer
 *   literal (whole doubles were wrapped), so the value is walked once and each such number made
 *   the Long it stands for. A numbers-heavy body (thousands of 12-digit integers) thus costs
 *   JSON.parse, one search and one walk; no literal is copied out of the text.
 * Only when the walk meets a number JSON.parse may have changed (beyond 2^53: a literal of 16 or
 * more digits, or beyond a double) is the text scanned literal by literal, and parsed again: an
 * int64 beyond 2^53 is then rewritten to `{"$numberLong": "<digits>"}` so that no digit is lost,
 * an integer beyond int64 becomes a double, as documented.
 *
 * Every literal is judged by its characters (how many digits, which of them), never converted
 * through BigInt, so that the work stays linear in the body's size. A literal longer than
 * MAX_NUMBER_LITERAL_LENGTH, or one a double cannot hold (`1e999` overflows, `1e-999` would be
 * stored as 0), is a 400 naming its field (json-number-literals.ts).
 *
 * Why a rewrite and not a reviver: Node 20's reviver is not given the literal's text (only
 * V8 11.4+ passes `context.source`), and a reviver is called for every value of the body, which
 * costs more than this search on the bodies that need it.
 *
 * The rewrite never makes text that is not JSON parse: only a complete, valid number literal
 * outside strings is replaced, and by a value (an object), which is valid exactly where the
 * number was. A body that fails to parse is parsed as it was sent, so that the error describes
 * the caller's text.
 *
 * Task arguments are read differently (queue/protocol/exact-numbers.ts keeps literals as their
 * text) because they are written back out as JSON for a Python worker, whereas a record ends as
 * BSON, where the literal's BSON type, not its text, is what must survive.
 */
import { Double, Long } from 'mongodb';
import {
  DIGIT_0,
  DOT,
  MAX_NUMBER_LITERAL_LENGTH,
  MINUS,
  QUOTE,
  isDigit,
  isNumberChar,
  literalError,
  mayHoldFractions,
  numberRunEnd,
  type LiteralProblem,
  rangeProblem,
  stringEnd,
} from '../lib/json-number-literals.js';
import { MAX_NESTING_DEPTH } from './extended-json.js';

export { MAX_NUMBER_LITERAL_LENGTH } from '../lib/json-number-literals.js';

/** A complete JSON number literal (RFC 8259): the rewrite leaves anything else to JSON.parse. */
const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/** Up to nine digits every integer is an int32. */
const SURE_INT32_DIGITS = 9;
/** 2^63: an integer JSON.parse read as this or more (in size) was beyond int64. */
const INT64_BOUND = 2 ** 63;
/** The largest integer a double holds exactly (2^53 - 1), and int64's bounds, as digits. */
const MAX_SAFE_DIGITS = String(Number.MAX_SAFE_INTEGER);
const INT64_MAX_DIGITS = '9223372036854775807';
const INT64_MIN_DIGITS = '9223372036854775808';
/**
 * A fraction with a digit that is not 0, at most SURE_INT32_DIGITS digits before its point, this
 * many after it and no exponent is surely a double JSON.parse reads right: not whole, not beyond
 * int32, neither overflowing nor underflowing. Most measured values are such, and are passed
 * over without being copied out of the text.
 */
const SURE_FRACTION_DIGITS = 300;
/** An integer literal of up to this many digits is below a double's largest value. */
const MAX_DOUBLE_DIGITS = 308;

const WHERE = 'the request body';

/** JSON.parse for a record body, with its number literals typed as described above. */
export function parseRecordJson(text: string): unknown {
  const doubles = mayHoldFractions(text) ? wrapWholeDoubles(text) : { text };
  // A refusal names the first literal of the text that cannot be kept, integers included.
  const value = parseRewritten(doubles.problem === undefined ? doubles : typeNumberLiterals(text), text);
  if (typeWideIntegers(value, 1, false)) return value;
  // A literal of 16 digits or more, or beyond a double: each literal of the text is judged.
  const typed = parseRewritten(typeNumberLiterals(text), text);
  typeWideIntegers(typed, 1, true);
  return typed;
}

/** The text with literals rewritten, or the first literal that cannot be kept. */
interface Rewrite {
  text: string;
  problem?: { start: number; end: number; kind: LiteralProblem };
}

/**
 * JSON.parse of the rewritten text. Text that is not JSON gets JSON.parse's error about the
 * caller's own text; JSON with a literal that cannot be kept, the 400 naming it.
 */
function parseRewritten(rewrite: Rewrite, text: string): unknown {
  if (rewrite.problem !== undefined) {
    JSON.parse(text);
    const { start, end, kind } = rewrite.problem;
    throw literalError(text, start, end, kind, WHERE);
  }
  if (rewrite.text === text) return JSON.parse(text);
  try {
    return JSON.parse(rewrite.text);
  } catch {
    return JSON.parse(text);
  }
}

/**
 * The text with each whole double (`3.0`, `1e3`) replaced by its wrapper; every literal with a
 * fraction or an exponent is checked against the length bound and a double's range. Integer
 * literals are not looked at (the walk after JSON.parse types them).
 */
function wrapWholeDoubles(text: string): Rewrite {
  let out = '';
  let copiedTo = 0;
  let at = 0;
  const end = text.length;
  while (at < end) {
    const code = text.charCodeAt(at);
    if (code === QUOTE) {
      at = stringEnd(text, at);
      if (at < 0) break;
      continue;
    }
    if (code !== MINUS && !isDigit(code)) {
      at += 1;
      continue;
    }
    const start = at;
    at += 1;
    while (at < end && isDigit(text.charCodeAt(at))) at += 1;
    const intDigits = at - start - (code === MINUS ? 1 : 0);
    // An integer: the walk after JSON.parse types it.
    if (at === end || !isNumberChar(text.charCodeAt(at))) continue;
    if (text.charCodeAt(at) === DOT) {
      // The common case, in one pass: a fraction that is surely not whole and in range (see below).
      at += 1;
      const fractionFrom = at;
      let nonZero = false;
      for (let c = text.charCodeAt(at); at < end && isDigit(c); c = text.charCodeAt(at)) {
        if (c !== DIGIT_0) nonZero = true;
        at += 1;
      }
      const plain = nonZero && intDigits <= SURE_INT32_DIGITS && at - fractionFrom <= SURE_FRACTION_DIGITS;
      if (plain && (at === end || !isNumberChar(text.charCodeAt(at)))) continue;
    }
    const runEnd = numberRunEnd(text, at);
    const wrapper = fractionWrapper(text, start, runEnd);
    if (typeof wrapper === 'object') return { text, problem: wrapper };
    if (wrapper !== undefined) {
      out += text.slice(copiedTo, start) + wrapper;
      copiedTo = runEnd;
    }
    at = runEnd;
  }
  return { text: copiedTo === 0 ? text : out + text.slice(copiedTo) };
}

/**
 * The wrapper for the literal text[start, end) that has a fraction or an exponent: a
 * `$numberDouble` when its value is whole, else undefined (also for a run that is no JSON
 * number: JSON.parse refuses it); the problem when it is too long or out of range.
 */
function fractionWrapper(text: string, start: number, end: number): string | Required<Rewrite>['problem'] | undefined {
  if (end - start > MAX_NUMBER_LITERAL_LENGTH) return { start, end, kind: 'too_long' };
  const literal = text.slice(start, end);
  if (!JSON_NUMBER.test(literal)) return undefined;
  const value = Number(literal);
  const kind = rangeProblem(text, start, end, value);
  if (kind !== undefined) return { start, end, kind };
  return Number.isInteger(value) ? `{"$numberDouble":"${literal}"}` : undefined;
}

/**
 * The Extended JSON wrapper a literal stands for, or undefined when JSON.parse already reads it
 * right or the walk after it types it (an integer up to 2^53, or beyond int64).
 */
export function typedLiteral(literal: string): string | undefined {
  if (literal.length > MAX_NUMBER_LITERAL_LENGTH || !JSON_NUMBER.test(literal)) return undefined;
  if (/[.eE]/.test(literal)) return Number.isInteger(Number(literal)) ? `{"$numberDouble":"${literal}"}` : undefined;
  return integerKind(literal, literal.charCodeAt(0) === MINUS ? 1 : 0, literal.length) === 'exact-int64'
    ? `{"$numberLong":"${literal}"}`
    : undefined;
}

/**
 * What JSON.parse makes of the integer literal text[start, end) (digits from `digitsFrom`):
 * `parsed-exactly` up to 2^53 in size, `exact-int64` for an int64 it would round, `beyond-int64`
 * for anything larger (a double, as documented). Decided on the digits, without converting them.
 */
function integerKind(text: string, digitsFrom: number, end: number): 'parsed-exactly' | 'exact-int64' | 'beyond-int64' {
  const digits = end - digitsFrom;
  if (digits < MAX_SAFE_DIGITS.length) return 'parsed-exactly';
  if (digits === MAX_SAFE_DIGITS.length && text.slice(digitsFrom, end) <= MAX_SAFE_DIGITS) return 'parsed-exactly';
  if (digits < INT64_MAX_DIGITS.length) return 'exact-int64';
  if (digits > INT64_MAX_DIGITS.length) return 'beyond-int64';
  const bound = digitsFrom > 0 && text.charCodeAt(digitsFrom - 1) === MINUS ? INT64_MIN_DIGITS : INT64_MAX_DIGITS;
  // Same length, no leading zeros (JSON has none): comparing the text compares the numbers.
  return text.slice(digitsFrom, end) <= bound ? 'exact-int64' : 'beyond-int64';
}

/**
 * The text with every literal that needs a wrapper replaced: whole doubles, and int64s beyond
 * 2^53 that JSON.parse would round. Scans the text once: strings are skipped whole (their
 * closing quote found by indexOf), each literal is judged by its characters. Refuses a literal
 * that is too long or out of a double's range. Unterminated strings end the scan: the text is
 * then not JSON anyway.
 */
export function typeNumberLiterals(text: string): Rewrite {
  let out = '';
  let copiedTo = 0;
  let at = 0;
  const end = text.length;
  while (at < end) {
    const code = text.charCodeAt(at);
    if (code === QUOTE) {
      at = stringEnd(text, at);
      if (at < 0) break;
      continue;
    }
    if (code !== MINUS && !isDigit(code)) {
      at += 1;
      continue;
    }
    const start = at;
    if (code === MINUS) at += 1;
    const digitsFrom = at;
    while (at < end && isDigit(text.charCodeAt(at))) at += 1;
    const intDigits = at - digitsFrom;
    if (at < end && isNumberChar(text.charCodeAt(at))) {
      // A fraction, an exponent, or a run that is no JSON number at all.
      const runEnd = numberRunEnd(text, at);
      const wrapper = fractionWrapper(text, start, runEnd);
      if (typeof wrapper === 'object') return { text, problem: wrapper };
      if (wrapper !== undefined) {
        out += text.slice(copiedTo, start) + wrapper;
        copiedTo = runEnd;
      }
      at = runEnd;
      continue;
    }
    // An integer literal (or a malformed run JSON.parse refuses: "-", "012").
    if (intDigits <= SURE_INT32_DIGITS) continue;
    if (at - start > MAX_NUMBER_LITERAL_LENGTH) return { text, problem: { start, end: at, kind: 'too_long' } };
    if (text.charCodeAt(digitsFrom) === DIGIT_0) continue;
    const kind = integerKind(text, digitsFrom, at);
    if (kind === 'exact-int64') {
      out += `${text.slice(copiedTo, start)}{"$numberLong":"${text.slice(start, at)}"}`;
      copiedTo = at;
    } else if (kind === 'beyond-int64' && intDigits > MAX_DOUBLE_DIGITS && !Number.isFinite(Number(text.slice(start, at)))) {
      return { text, problem: { start, end: at, kind: 'overflow' } };
    }
  }
  return { text: copiedTo === 0 ? text : out + text.slice(copiedTo) };
}

/** The Long (or beyond int64, the Double) for an integer JSON.parse read from an integer literal beyond int32. */
function wideInteger(value: number): Long | Double {
  return value < INT64_BOUND && value > -INT64_BOUND ? Long.fromNumber(value) : new Double(value);
}

/**
 * Makes each number of a parsed body that is an integer beyond int32 the Long (beyond int64, the
 * Double) it stands for, in place (the value is JSON.parse's own). Unless `final`, stops and
 * answers false at a number JSON.parse may have changed (beyond 2^53 or not finite): the text
 * must then be read literal by literal. Below MAX_NESTING_DEPTH only: a deeper body is refused
 * by the Extended JSON revival, which checks that before anything else reads it.
 */
function typeWideIntegers(value: unknown, depth: number, final: boolean): boolean {
  if (typeof value !== 'object' || value === null || depth > MAX_NESTING_DEPTH) return true;
  const keys = Array.isArray(value) ? undefined : Object.keys(value);
  const container = value as Record<string | number, unknown>;
  const count = keys === undefined ? (value as unknown[]).length : keys.length;
  for (let i = 0; i < count; i += 1) {
    const key = keys === undefined ? i : keys[i]!;
    const item = container[key];
    if (typeof item === 'number') {
      // An int32 (the common case) is left as it is.
      if ((item | 0) === item || !Number.isInteger(item)) {
        if (Number.isFinite(item) || final) continue;
        return false;
      }
      if (!final && (item > Number.MAX_SAFE_INTEGER || item < -Number.MAX_SAFE_INTEGER)) return false;
      // JSON.parse made "__proto__" an own property; the revival refuses it, so it is left alone.
      if (key !== '__proto__') container[key] = wideInteger(item);
    } else if (typeof item === 'object' && item !== null && !typeWideIntegers(item, depth + 1, final)) {
      return false;
    }
  }
  return true;
}
