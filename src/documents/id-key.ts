/**
 * A string that is the same for two `_id` values exactly when the engine holds them to be the same
 * `_id`, for matching ids the API sent against ids the database gives back.
 *
 * The same value is not the same JavaScript value on the two sides: a body's int64 is a Long, read
 * back it is a number (within 2^53, the driver's promoteLongs) or a Long; a body's whole double
 * (`1.0`) is a Double, read back a number. And the engine compares numbers by value across their
 * types (int32 1, int64 1, double 1.0 and decimal 1.00 are one `_id`), so the key does too: every
 * number becomes its exact decimal value. Other types keep their type in the key (`"1"` and `1`,
 * an ObjectId and its hex string are different records); a string and a symbol compare as one type
 * in the engine, and so here. Embedded documents are keyed field by field, in order, as the engine
 * compares them.
 */
import { BSON, type Binary, type Long, type ObjectId } from 'mongodb';

type Tagged = { _bsontype?: unknown };

const bsonType = (value: object): unknown => (value as Tagged)._bsontype;

export function idKey(value: unknown): string {
  switch (typeof value) {
    case 'number':
      return numberKey(value);
    case 'bigint':
      return exactKey(value, 0);
    case 'string':
      return `s${JSON.stringify(value)}`;
    case 'boolean':
      return value ? 'true' : 'false';
    case 'undefined':
      return 'undefined';
    case 'object':
      return value === null ? 'null' : objectKey(value);
    default:
      return `?${String(value)}`;
  }
}

function objectKey(value: object): string {
  if (value instanceof Date) return `d${value.getTime()}`;
  if (Array.isArray(value)) return `[${value.map(idKey).join(',')}]`;
  switch (bsonType(value)) {
    case 'Int32':
    case 'Double':
      return numberKey((value as { value: number }).value);
    // Timestamp is a subclass of Long in bson, but a type of its own in the engine: by the tag, not instanceof.
    case 'Long':
      return exactKey(BigInt((value as Long).toString()), 0);
    case 'Decimal128':
      return decimalKey(value.toString());
    case 'BSONSymbol':
      return idKey(value.valueOf());
    case 'ObjectId':
      return `o${(value as ObjectId).toHexString()}`;
    case 'Binary':
      return `b${(value as Binary).sub_type}:${(value as Binary).toString('base64')}`;
    case undefined: {
      const fields = Object.entries(value).map(([key, field]) => `${JSON.stringify(key)}:${idKey(field)}`);
      return `{${fields.join(',')}}`;
    }
    default:
      return `x${BSON.EJSON.stringify(value, { relaxed: false })}`;
  }
}

function numberKey(value: number): string {
  if (!Number.isFinite(value)) return `n${value}`;
  if (Number.isInteger(value)) return exactKey(BigInt(value), 0);
  // A fraction is m·2^-k exactly (k ≤ 1074; doubling a fraction is exact), which is m·5^k·10^-k.
  let mantissa = value;
  let halvings = 0;
  while (!Number.isInteger(mantissa)) {
    mantissa *= 2;
    halvings += 1;
  }
  return exactKey(BigInt(mantissa) * 5n ** BigInt(halvings), -halvings);
}

/** A decimal128's text (`1.50`, `-1.5E+3`, `NaN`, `-Infinity`) as the exact number it stands for. */
function decimalKey(text: string): string {
  const match = /^(-?)(\d+)(?:\.(\d+))?(?:E([+-]\d+))?$/.exec(text);
  if (match === null) return `n${text.replace(/^-(?=NaN)/, '')}`;
  const [, sign, whole, fraction = '', exponent = '0'] = match;
  const digits = BigInt(`${sign}${whole}${fraction}`);
  return exactKey(digits, Number(exponent) - fraction.length);
}

/** The number digits·10^exponent, written one way only: trailing zeros of the digits moved into the exponent, zero unsigned. */
function exactKey(digits: bigint, exponent: number): string {
  if (digits === 0n) return 'n0';
  let d = digits;
  let e = exponent;
  while (d % 10n === 0n) {
    d /= 10n;
    e += 1;
  }
  return `n${d}e${e}`;
}
