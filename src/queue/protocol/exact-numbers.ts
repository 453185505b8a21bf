/**
 * Task arguments and results as their authors wrote them. Celery's workers read a message's JSON with Python's
 * json module, where `3.0` is a float, `3` an int and `12345678901234567890` that exact int.
 * JSON.parse reads all three as JavaScript numbers, so an argument the API passed on as
 * JSON.stringify writes it would reach a Python task as `3` (an int) or as a rounded int.
 *
 * Submissions are therefore parsed so that the literals JSON.parse would change are kept as their
 * text (a LosslessNumber): a literal with a fraction or an exponent whose value is whole (`3.0`,
 * `1e3`, `-0.0`) or not finite (`1e400`), and an integer beyond 2^53. Every other number stays a
 * JavaScript number, whose shortest text reads back the same in Python. The message's body
 * writes kept literals verbatim, and the task log stores them with their BSON type (a double, an
 * int64: stored-arguments.ts). A Python task's result (`2.0`), read from the result store's JSON
 * text the same way, is answered as `2.0`, so the Python client gets a float back.
 *
 * Bodies with no digit before `.`/`e`/`E` are read by JSON.parse; only when they hold an integer
 * it may have rounded (beyond 2^53, or beyond a double) are they read again, literal by literal.
 *
 * Record bodies are read differently (documents/number-literals.ts turns literals into BSON
 * doubles and longs) because a record ends as BSON, whereas task arguments are written back out
 * as JSON text for Python, where keeping the literal's exact text is what preserves its type.
 */
import { LosslessNumber, isLosslessNumber, parse, stringify } from 'lossless-json';
import { assertNumberLiteralsBounded, mayHoldFractions } from '../../lib/json-number-literals.js';
import type { JsonValue } from './json.js';

export { LosslessNumber } from 'lossless-json';

/** JSON, with some numbers kept as their literal. */
export type ExactJsonValue = JsonValue | LosslessNumber | ExactJsonValue[] | { [key: string]: ExactJsonValue };
export type ExactJsonObject = { [key: string]: ExactJsonValue };

export const FRACTION_OR_EXPONENT = /[.eE]/;

function exactNumber(literal: string): number | LosslessNumber {
  const value = Number(literal);
  if (FRACTION_OR_EXPONENT.test(literal)) {
    return Number.isInteger(value) || !Number.isFinite(value) ? new LosslessNumber(literal) : value;
  }
  return Number.isSafeInteger(value) ? value : new LosslessNumber(literal);
}

/** JSON.parse's last-one-wins for a repeated key (lossless-json refuses one by default). */
const lastKeyWins = ({ newValue }: { newValue: unknown }): unknown => newValue;

/**
 * JSON.parse for task arguments and results, with the literals described above kept. Text that is not
 * JSON is reported by JSON.parse, in its words.
 */
export function parseExactJson(text: string): unknown {
  if (!mayHoldFractions(text)) {
    const value: unknown = JSON.parse(text);
    if (!holdsInexactInteger(value)) return value;
  }
  try {
    return parse(text, null, { parseNumber: exactNumber, onDuplicateKey: lastKeyWins });
  } catch {
    return JSON.parse(text);
  }
}

/** Whether a parsed value holds a number JSON.parse may have changed: an integer beyond 2^53, or not finite. */
function holdsInexactInteger(root: unknown): boolean {
  // Iterative: a deeply nested body cannot overflow the stack here.
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const value = stack.pop();
    if (typeof value === 'number') {
      if (!Number.isFinite(value) || Math.abs(value) > Number.MAX_SAFE_INTEGER) return true;
    } else if (typeof value === 'object' && value !== null) {
      for (const item of Array.isArray(value) ? value : Object.values(value)) stack.push(item);
    }
  }
  return false;
}

/**
 * parseExactJson for a submission's body: a number literal longer than MAX_NUMBER_LITERAL_LENGTH
 * is refused first (a 400 naming its field), so that no caller decides how long a literal every
 * later step converts and copies. Results are not bounded: a Python task may return any int.
 */
export function parseExactJsonBody(text: string): unknown {
  assertNumberLiteralsBounded(text, 'the request body');
  return parseExactJson(text);
}

/** Whether a value holds a kept literal (parsed submissions and results may; a worker's own values never). */
export function holdsExactNumbers(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (isLosslessNumber(value)) return true;
  if (Array.isArray(value)) return value.some(holdsExactNumbers);
  for (const key in value) {
    if (holdsExactNumbers((value as Record<string, unknown>)[key])) return true;
  }
  return false;
}

/** JSON text of a message body: JSON.stringify's, with kept literals written as they came. */
export function exactJson(value: unknown): string {
  return holdsExactNumbers(value) ? (stringify(value) as string) : JSON.stringify(value);
}

/** The number a kept literal reads as in Python (for `argsrepr`): `3.0`, `1000.0`, `inf`, exact ints. */
export function pythonNumberText(literal: LosslessNumber): string {
  const text = literal.value;
  if (!FRACTION_OR_EXPONENT.test(text)) return text;
  const value = Number(text);
  if (!Number.isFinite(value)) return value > 0 ? 'inf' : '-inf';
  if (Object.is(value, -0)) return '-0.0';
  // Python writes floats from 1e16 up with an exponent (`1e+16`), as toExponential does.
  if (Math.abs(value) >= 1e16) return value.toExponential();
  const shortest = String(value);
  return shortest.includes('e') ? shortest : `${shortest}.0`;
}
