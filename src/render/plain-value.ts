import type { Binary, BSONRegExp, BSONSymbol, Code, DBRef, Decimal128, Double, Int32, Long, ObjectId, Timestamp } from 'mongodb';
import { isLosslessNumber } from 'lossless-json';
import { BsonRecord } from './bson-record.js';
import { nonFiniteDouble, plainDouble } from './double-text.js';
import { IntegralDouble, type PlainValue } from './types.js';

/**
 * Documents nest at most 100 levels in MongoDB; anything far deeper than that is a cyclic or
 * hostile in-memory value, and failing cleanly beats a stack overflow.
 */
const MAX_DEPTH = 1000;

/** BSON binary subtype of a UUID (the standard, RFC 4122 byte order). */
const BINARY_SUBTYPE_UUID = 4;
const UUID_BYTES = 16;

/**
 * Turns a driver value (BSON classes, Date, Buffer, ...) into plain JSON, the one tree every
 * format renders. Rules:
 * - ObjectId → 24-hex string; Date → ISO-8601 (an invalid Date → null, as JSON.stringify does);
 * - Decimal128 → string (a double would lose digits); Int32 → number; Double → number, or an
 *   IntegralDouble when its value is whole (so that it is written `3.0`, see double-text.ts); Long/bigint →
 *   number when it is a safe integer, else its decimal string (never a silently rounded number);
 * - Binary/Buffer/Uint8Array → base64; UUID (and Binary subtype 4) → canonical dashed string;
 * - Timestamp → {t, i}; RegExp/BSONRegExp → {$regex, $options}; MinKey/MaxKey → "MinKey"/"MaxKey";
 *   Code → {$code[, $scope]}; DBRef → {$ref, $id[, $db]}; BSONSymbol → string;
 * - a number kept as its literal (LosslessNumber, a task's arguments and results) → as a double or an
 *   integer of that value, by whether the literal has a fraction or an exponent;
 * - numbers that are not finite (±Infinity, NaN: doubles) → `{"$numberDouble": "Infinity"}` and so on,
 *   the Extended JSON the API reads back as that double, never a silent null; `undefined`, functions and symbols are dropped from objects and
 *   become null in arrays (JSON.stringify semantics, so every format agrees with JSON);
 * - other objects with toJSON (URL, ...) are converted through it; other objects by own keys.
 * A BsonRecord is its document decoded with its doubles kept apart from its integers (see BsonRecord.decodeTyped). Keys are copied so that a `__proto__` key stays an ordinary own property (no prototype
 * pollution of the output).
 */
export function toPlainValue(value: unknown): PlainValue {
  return convert(value, 0) ?? null;
}

/** `undefined` means "omit" (a property) or "null" (an array item), like JSON.stringify. */
function convert(value: unknown, depth: number): PlainValue | undefined {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      return Number.isFinite(value) ? value : nonFiniteDouble(value);
    case 'bigint':
      return integerToPlain(value.toString());
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined;
  }
  if (value === null || typeof value !== 'object') return null;
  if (depth > MAX_DEPTH) throw new RangeError(`value nests deeper than ${MAX_DEPTH} levels (cyclic?)`);

  if (Array.isArray(value)) return value.map((item: unknown) => convert(item, depth + 1) ?? null);
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
  if (value instanceof RegExp) return regexValue(value.source, value.flags);
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64');

  if (!hasPlainPrototype(value)) {
    // Already plain (a value converted twice).
    if (value instanceof IntegralDouble) return value;
    // A number kept as its literal (a Python task's `2.0`): a double, or an integer.
    if (isLosslessNumber(value)) return /[.eE]/.test(value.value) ? plainDouble(Number(value.value)) : integerToPlain(value.value);
    // A record still in its bytes (bson-record.ts) is the document it decodes to.
    if (value instanceof BsonRecord) return convert(value.decodeTyped(), depth);
    // BSON classes carry `_bsontype` on their prototype. Plain objects are never dispatched on it:
    // a stored document may well contain a field called `_bsontype`.
    const tag = (value as { _bsontype?: unknown })._bsontype;
    if (typeof tag === 'string') {
      const converted = convertBson(tag, value, depth);
      if (converted !== undefined) return converted;
    }
    const toJSON = (value as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === 'function') return convert(toJSON.call(value), depth + 1);
  }
  return convertObject(value as Record<string, unknown>, depth);
}

/** undefined for a tag this module does not know (then the generic rules apply). */
function convertBson(tag: string, value: object, depth: number): PlainValue | undefined {
  switch (tag) {
    case 'ObjectId':
      return (value as ObjectId).toHexString();
    case 'Decimal128':
      return (value as Decimal128).toString();
    case 'Long':
      return integerToPlain((value as Long).toString());
    case 'Int32':
      return (value as Int32).value;
    case 'Double':
      return plainDouble((value as Double).value);
    case 'Timestamp': {
      const timestamp = value as Timestamp;
      return { t: timestamp.t, i: timestamp.i };
    }
    case 'Binary':
      return binaryValue(value as Binary);
    case 'BSONRegExp': {
      const regex = value as BSONRegExp;
      return regexValue(regex.pattern, regex.options);
    }
    case 'MinKey':
      return 'MinKey';
    case 'MaxKey':
      return 'MaxKey';
    case 'BSONSymbol':
      return String((value as BSONSymbol).valueOf());
    case 'Code': {
      const code = value as Code;
      const out: { [key: string]: PlainValue } = { $code: code.code };
      if (code.scope) out.$scope = convert(code.scope, depth + 1) ?? null;
      return out;
    }
    case 'DBRef': {
      const ref = value as DBRef;
      const out: { [key: string]: PlainValue } = { $ref: ref.collection, $id: convert(ref.oid, depth + 1) ?? null };
      if (ref.db) out.$db = ref.db;
      return out;
    }
    default:
      return undefined;
  }
}

function binaryValue(binary: Binary): string {
  // UUID is a Binary subclass with subtype 4; a subtype-4 Binary read from the database is a UUID
  // too, so both render as the canonical dashed string. Other subtypes are opaque bytes.
  if (binary.sub_type === BINARY_SUBTYPE_UUID && binary.position === UUID_BYTES) {
    return binary.toUUID().toHexString(true);
  }
  return binary.toString('base64');
}

/** Decimal integer text → number when exact, else the text itself (JSON numbers lose precision). */
function integerToPlain(decimal: string): number | string {
  const number = Number(decimal);
  return Number.isSafeInteger(number) ? number : decimal;
}

function regexValue(pattern: string, options: string): PlainValue {
  return { $regex: pattern, $options: options };
}

function hasPlainPrototype(value: object): boolean {
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

function convertObject(source: Record<string, unknown>, depth: number): PlainValue {
  const out: { [key: string]: PlainValue } = {};
  for (const key of Object.keys(source)) {
    const converted = convert(source[key], depth + 1);
    if (converted === undefined) continue;
    if (key === '__proto__') {
      // Plain assignment would replace the prototype of `out` instead of adding a key.
      Object.defineProperty(out, key, { value: converted, enumerable: true, writable: true, configurable: true });
    } else {
      out[key] = converted;
    }
  }
  return out;
}
