/**
 * A submission's arguments as the task log stores them: the literals the API kept as written
 * (`3.0`, `1e3`, integers beyond 2^53; see exact-numbers.ts) become the BSON numbers they stand
 * for, as a record body's literals do: a double, or an int64 when an integer fits one.
 */
import { Double, Long } from 'mongodb';
import { isLosslessNumber, type LosslessNumber } from 'lossless-json';
import { FRACTION_OR_EXPONENT, holdsExactNumbers, type ExactJsonObject, type ExactJsonValue } from '../protocol/exact-numbers.js';
import type { JsonObject, JsonValue } from '../protocol/json.js';

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

function storedNumber(literal: LosslessNumber): Double | Long {
  const text = literal.value;
  if (!FRACTION_OR_EXPONENT.test(text)) {
    const value = BigInt(text);
    if (value >= INT64_MIN && value <= INT64_MAX) return Long.fromBigInt(value);
  }
  return new Double(Number(text));
}

function storedValue(value: ExactJsonValue): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (isLosslessNumber(value)) return storedNumber(value);
  if (Array.isArray(value)) return value.map(storedValue);
  const out: Record<string, unknown> = {};
  for (const [key, member] of Object.entries(value)) {
    // defineProperty: a key "__proto__" (allowed in JSON) stays a key.
    Object.defineProperty(out, key, { value: storedValue(member), enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/**
 * The arguments to store. Typed as JSON because they are read back as JSON: the driver reads a
 * double and an int64 as numbers.
 */
export function storedArgs(args: ExactJsonValue[]): JsonValue[] {
  return holdsExactNumbers(args) ? (storedValue(args) as JsonValue[]) : (args as JsonValue[]);
}

export function storedKwargs(kwargs: ExactJsonObject): JsonObject {
  return holdsExactNumbers(kwargs) ? (storedValue(kwargs) as JsonObject) : (kwargs as JsonObject);
}
