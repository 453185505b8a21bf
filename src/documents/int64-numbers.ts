/**
 * The int64s of a record, made where the driver takes the record.
 *
 * A record body keeps each integer literal beyond int32 as the JavaScript number JSON.parse read
 * (number-literals.ts), exactly (up to 2^53; beyond that the parser writes `{"$numberLong": ...}`,
 * which the revival makes a Long). The driver would store such a number as a double: it stores an
 * int64 only from a `Long`. So every record, replacement and update that goes to the driver is
 * passed through int64Numbers first, which makes each integral number beyond int32 the Long it
 * stands for (beyond int64, where only a double holds it, the Double): the body's integers are
 * stored as the literals asked for (docs/api-behaviour.md, "Numbers").
 *
 * Why here and not while parsing: a Long is an object of 48 bytes. Made while parsing, one per
 * integer of a 4 MiB body (about 330,000) stays alive until the whole body is stored, outgrows
 * V8's young generation and is copied and promoted by its collections, which cost more CPU than
 * the parse itself. Made per insert command (batch-insert.ts), a command's Longs die with it.
 *
 * The value is not changed: a container holding a number to convert is copied (an object
 * shallowly, an array from its first changed item on, since writing an object into an array of
 * numbers makes V8 box each of its numbers), so that the body, which the request keeps until it
 * answers, holds no Long; everything else is shared with it. (Converting an insert command's
 * records in place and putting the numbers back once it is answered measured the same CPU as
 * the copies.)
 *
 * Until the driver, every reader of a body (the checks of record-rules.ts and operators.ts, the
 * revival, `_id` matching in id-key.ts, the renderers of an answer) treats such a number as it
 * treats the Long: by its value.
 */
import { copyBefore } from '../lib/array-copy.js';
import { Code, Double, Long } from 'mongodb';

const TWO_TO_32 = 2 ** 32;
/** 2^63: an integer of this size or more is beyond int64 and stays a double. */
const INT64_BOUND = 2 ** 63;

/** The Long for an integer beyond int32 (beyond int64, the Double). */
export function wideInteger(value: number): Long | Double {
  if (value >= INT64_BOUND || value <= -INT64_BOUND) return new Double(value);
  // Its two halves, as Long.fromNumber finds them, without its checks and cache.
  return Long.fromBits((value % TWO_TO_32) | 0, Math.floor(value / TWO_TO_32) | 0);
}

/**
 * `value` (a record, a replacement, an update, or an array of them) with each integral number
 * beyond int32 made a Long (beyond int64 a Double), at any depth, inside a Code's scope too.
 * Returns `value` itself when nothing is converted; never changes it.
 */
export function int64Numbers<T>(value: T): T {
  return new Int64Conversion().of(value);
}

/**
 * Values known to hold no integer beyond int32: bodies whose parse walk met none
 * (number-literals.ts), their revivals, and the arrays of records made from them. int64Numbers
 * and the insert commands (batch-insert.ts) hand them over as they are, without walking them:
 * a body of int32s, strings and fractions costs no more than before int64s were made here.
 */
const int64Free = new WeakSet<object>();

export function vouchInt64Free(value: unknown): void {
  if (typeof value === 'object' && value !== null) int64Free.add(value);
}

export function isInt64Free(value: unknown): boolean {
  return typeof value === 'object' && value !== null && int64Free.has(value);
}

/**
 * Conversions as int64Numbers makes them, counting the Longs (and Doubles) they make: one
 * conversion over the records of an insert command tells how many of them the command holds
 * (batch-insert.ts bounds a command by that count).
 */
export class Int64Conversion {
  /** Longs and Doubles made so far by this conversion. */
  made = 0;

  /** int64Numbers(value), its Longs counted in `made`. */
  of<T>(value: T): T {
    return isInt64Free(value) ? value : (this.converted(value) as T);
  }

  private converted(value: unknown): unknown {
    if (typeof value === 'number') {
      if ((value | 0) === value || !Number.isInteger(value)) return value;
      this.made += 1;
      return wideInteger(value);
    }
    if (typeof value !== 'object' || value === null) return value;
    if (Array.isArray(value)) return this.convertedArray(value as unknown[]);
    const prototype = Object.getPrototypeOf(value) as unknown;
    if (prototype === Object.prototype || prototype === null) return this.convertedObject(value as Record<string, unknown>);
    // A Code's scope is a document the serializer writes as it writes a record.
    if (value instanceof Code && value.scope !== undefined && value.scope !== null) {
      const scope = this.converted(value.scope);
      return scope === value.scope ? value : new Code(value.code, scope as Record<string, unknown>);
    }
    // Any other class instance (ObjectId, Date, Long, Double, Decimal128, ...) is a value, not a document.
    return value;
  }

  private convertedObject(object: Record<string, unknown>): Record<string, unknown> {
    let out: Record<string, unknown> | undefined;
    // for-in reads the keys from the object's shape, without the array Object.keys would allocate
    // (a plain object's prototype, Object.prototype or none, has no enumerable keys).
    for (const key in object) {
      const item = object[key];
      if (typeof item !== 'number' && (typeof item !== 'object' || item === null)) continue;
      const typed = this.converted(item);
      if (typed === item) continue;
      // A spread copies own keys as data properties: a "__proto__" key (refused earlier anyway) stays one.
      out ??= { ...object };
      out[key] = typed;
    }
    return out ?? object;
  }

  private convertedArray(array: unknown[]): unknown[] {
    let out: unknown[] | undefined;
    for (let i = 0; i < array.length; i += 1) {
      const item = array[i];
      const typed = typeof item === 'number' || (typeof item === 'object' && item !== null) ? this.converted(item) : item;
      if (out !== undefined) out[i] = typed;
      else if (typed !== item) {
        out = copyBefore(array, i);
        out[i] = typed;
      }
    }
    return out ?? array;
  }
}
