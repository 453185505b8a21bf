/**
 * Python `repr()` of JSON values, for the `argsrepr`/`kwargsrepr` headers. Celery shows these
 * strings in logs, events and `inspect` output, so they should read like Python literals:
 * `[2, 'a', None]`, `{'x': True}`.
 */
import { isLosslessNumber } from 'lossless-json';
import { pythonNumberText, type ExactJsonValue } from './exact-numbers.js';

/** Celery's `argsrepr_maxsize`/`kwargsrepr_maxsize` (1024 characters). */
export const REPR_MAX_LENGTH = 1024;

export function pythonRepr(value: ExactJsonValue, maxLength = REPR_MAX_LENGTH): string {
  const text = repr(value);
  // Celery's saferepr also stops at the limit and marks the cut with an ellipsis.
  return text.length > maxLength ? `${text.slice(0, Math.max(0, maxLength - 3))}...` : text;
}

function repr(value: ExactJsonValue): string {
  if (value === null) return 'None';
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'number') return numberRepr(value);
  if (typeof value === 'string') return stringRepr(value);
  if (Array.isArray(value)) return `[${value.map(repr).join(', ')}]`;
  if (isLosslessNumber(value)) return pythonNumberText(value);
  return `{${Object.entries(value)
    .map(([key, item]) => `${stringRepr(key)}: ${repr(item)}`)
    .join(', ')}}`;
}

function numberRepr(value: number): string {
  if (Number.isNaN(value)) return 'nan';
  if (!Number.isFinite(value)) return value > 0 ? 'inf' : '-inf';
  return String(value);
}

/** Python picks single quotes unless the text contains one and no double quote. */
export function stringRepr(text: string): string {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of text) {
    const code = ch.codePointAt(0) ?? 0;
    if (ch === quote || ch === '\\') out += `\\${ch}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return out + quote;
}
