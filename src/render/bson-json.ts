/**
 * JSON written straight from a record's BSON bytes into an output buffer, in one pass: no BSON
 * objects, no plain tree, and for the text of ASCII strings (most of a record) no JavaScript
 * string either, only a copy of their bytes. On a long JSON or NDJSON read, decoding each record
 * into objects, converting them into the plain tree, stringifying that and encoding the text for
 * the socket took much of the API's CPU per record, and their garbage much of the rest.
 *
 * The text is exactly `plainJson(toPlainValue(record))` (the record as BsonRecord renders it), for
 * the decoder settings described by BsonJsonOptions. Whatever could make the two differ is not
 * rendered here: the caller is told (undefined) and decodes the record instead. That covers
 * - types with rules of their own in the decoder: Decimal128, regular expressions, code,
 *   symbols, DBPointer, `undefined`, the old binary subtype 2;
 * - keys a JavaScript object would not keep in place: duplicates (the last value wins, at the
 *   first key's position) and array-index keys such as "7" (objects list them first, in
 *   numeric order);
 * - keys starting with `$` (a `$ref`/`$id` document decodes to a DBRef, rendered differently);
 * - a string that decodes with U+FFFD while UTF-8 is validated (the decoder may refuse it);
 * - nesting deeper than MAX_DEPTH, and malformed bytes (the decoder raises the proper error).
 */

import { doubleText, nonFiniteJson } from './double-text.js';

/** How the collection's decoder turns values into JavaScript (the parts that change the JSON). */
export interface BsonJsonOptions {
  /**
   * An int64 within ±2^53 decodes to a number (promoteLongs and promoteValues, no useBigInt64).
   * Only ±2^53 itself renders differently: as that number, where a Long or bigint of it becomes
   * text (it is not a safe integer).
   */
  readonly longsAsNumbers: boolean;
  /** Binary decodes to a Buffer (promoteBuffers with promoteValues): a UUID is then bytes. */
  readonly buffersAsBytes: boolean;
  /** Strings are checked to be valid UTF-8 (the driver's enableUtf8Validation). */
  readonly validateUtf8: boolean;
  /**
   * Doubles are told from integers (BsonRecordReader.decodeTyped): a whole one is written `3.0`
   * (doubleText). Otherwise as JavaScript writes the number.
   */
  readonly typedDoubles: boolean;
}

/** Far below the plain tree's own limit, so that limit is always the decoder path's to apply. */
const MAX_DEPTH = 200;
/** Up to this many keys an object's keys are compared in a list; beyond, kept in a set. */
const KEY_LIST_LIMIT = 16;
const TWO_POW_32 = 4294967296;
/** int64 high word of +2^53 and -2^53 (their low word is 0). */
const HIGH_OF_2_POW_53 = 0x200000;
const HIGH_OF_MINUS_2_POW_53 = -0x200000;
const UUID_BYTES = 16;
const BINARY_SUBTYPE_OLD = 2;
const BINARY_SUBTYPE_UUID = 4;

const enum Type {
  Double = 0x01,
  String = 0x02,
  Object = 0x03,
  Array = 0x04,
  Binary = 0x05,
  ObjectId = 0x07,
  Boolean = 0x08,
  Date = 0x09,
  Null = 0x0a,
  Int32 = 0x10,
  Timestamp = 0x11,
  Int64 = 0x12,
  MaxKey = 0x7f,
  MinKey = 0xff,
}

/** Thrown (one shared value, no stack) when the record needs the decoder. */
const UNSUPPORTED: unique symbol = Symbol('needs the decoder');

/**
 * At most this many bytes of JSON per byte of BSON: a control character in a string becomes
 * `\u00XX` (6 bytes); every other element writes less than 6 bytes per byte of its encoding.
 */
const JSON_BYTES_PER_BSON_BYTE = 6;
const JSON_BYTES_SLACK = 64;

/** The most JSON a record of `size` BSON bytes can write. */
export function maxJsonBytes(size: number): number {
  return size * JSON_BYTES_PER_BSON_BYTE + JSON_BYTES_SLACK;
}

/**
 * Writes the record's JSON (UTF-8) into `target` from `offset`, which must have room for
 * maxJsonBytes(bytes.length). Returns the offset after it, or -1 when the record must be decoded
 * instead (see the module comment; what was written past `offset` is then to be ignored).
 * Never throws: malformed bytes are the decoder's to report.
 */
export function writeBsonJson(bytes: Uint8Array, options: BsonJsonOptions, target: Buffer, offset: number): number {
  const buffer = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (buffer.length < 5 || buffer.readInt32LE(0) !== buffer.length || buffer[buffer.length - 1] !== 0) return -1;
  const out: Output = { bytes: target, at: offset };
  try {
    writeDocument(buffer, 0, buffer.length, options, 0, false, out);
    return out.at;
  } catch {
    // UNSUPPORTED, or bytes the reads above ran past: either way the decoder decides.
    return -1;
  }
}

/** The record's JSON as text, or undefined when it must be decoded instead. */
export function bsonToJson(bytes: Uint8Array, options: BsonJsonOptions): string | undefined {
  const target = Buffer.allocUnsafe(maxJsonBytes(bytes.length));
  const end = writeBsonJson(bytes, options, target, 0);
  return end < 0 ? undefined : target.toString('utf8', 0, end);
}

/** Where the JSON goes: the buffer, and the offset of the next byte. */
interface Output {
  readonly bytes: Buffer;
  at: number;
}

const QUOTE = 0x22;
const COLON = 0x3a;
const COMMA = 0x2c;

/** Text known to be ASCII (numbers, hex, base64, ISO dates, JSON escapes). */
function ascii(out: Output, text: string): void {
  const bytes = out.bytes;
  let at = out.at;
  for (let index = 0; index < text.length; index += 1) bytes[at++] = text.charCodeAt(index);
  out.at = at;
}

/** Any text, as UTF-8 (JSON.stringify output of decoded strings: never a lone surrogate). */
function utf8(out: Output, text: string): void {
  out.at += out.bytes.write(text, out.at, 'utf8');
}

/** `start` is where the embedded document's length is; `end` is one past its last byte. */
function writeDocument(
  buffer: Buffer,
  start: number,
  end: number,
  options: BsonJsonOptions,
  depth: number,
  isArray: boolean,
  out: Output,
): void {
  if (depth > MAX_DEPTH) throw UNSUPPORTED;
  out.bytes[out.at++] = isArray ? 0x5b : 0x7b;
  let first = true;
  let seen: SeenKeys | undefined;
  let index = start + 4;
  for (;;) {
    const type = buffer[index++];
    if (type === 0) {
      if (index !== end) throw UNSUPPORTED;
      out.bytes[out.at++] = isArray ? 0x5d : 0x7d;
      return;
    }
    if (!first) out.bytes[out.at++] = COMMA;
    first = false;
    // The key: scanned to its NUL, noting whether it can be written as it is.
    const keyStart = index;
    let plain = true;
    let digits = true;
    let byte = buffer[index];
    while (byte !== 0) {
      if (byte === undefined || index >= end) throw UNSUPPORTED;
      if (byte < 0x20 || byte === 0x22 || byte === 0x5c || byte >= 0x80) plain = false;
      if (byte < 0x30 || byte > 0x39) digits = false;
      byte = buffer[++index];
    }
    const keyEnd = index;
    index += 1;
    if (!isArray) {
      // Array elements are positional (the decoder ignores their keys); object keys are not.
      if (buffer[keyStart] === 0x24 || (digits && isArrayIndex(buffer, keyStart, keyEnd))) throw UNSUPPORTED;
      if (plain) {
        seen = rememberPlain(seen, buffer, keyStart, keyEnd);
        out.bytes[out.at++] = QUOTE;
        copySmall(buffer, keyStart, keyEnd, out);
        out.bytes[out.at++] = QUOTE;
      } else {
        const name = buffer.toString('utf8', keyStart, keyEnd);
        seen = remember(keyNames(seen, buffer), name);
        utf8(out, JSON.stringify(name));
      }
      out.bytes[out.at++] = COLON;
    }
    switch (type) {
      case Type.Double: {
        const number = buffer.readDoubleLE(index);
        index += 8;
        ascii(out, options.typedDoubles ? doubleText(number) : Number.isFinite(number) ? String(number) : nonFiniteJson(number));
        break;
      }
      case Type.String: {
        const size = buffer.readInt32LE(index);
        index += 4;
        if (size <= 0 || index + size > end || buffer[index + size - 1] !== 0) throw UNSUPPORTED;
        writeString(buffer, index, index + size - 1, options.validateUtf8, out);
        index += size;
        break;
      }
      case Type.Object:
      case Type.Array: {
        const size = buffer.readInt32LE(index);
        if (size < 5 || index + size > end || buffer[index + size - 1] !== 0) throw UNSUPPORTED;
        writeDocument(buffer, index, index + size, options, depth + 1, type === Type.Array, out);
        index += size;
        break;
      }
      case Type.Binary: {
        const size = buffer.readInt32LE(index);
        const subtype = buffer[index + 4];
        const data = index + 5;
        if (size < 0 || data + size > end || subtype === BINARY_SUBTYPE_OLD) throw UNSUPPORTED;
        ascii(
          out,
          subtype === BINARY_SUBTYPE_UUID && size === UUID_BYTES && !options.buffersAsBytes
            ? `"${uuidText(buffer.toString('hex', data, data + size))}"`
            : `"${buffer.toString('base64', data, data + size)}"`,
        );
        index = data + size;
        break;
      }
      case Type.ObjectId:
        if (index + 12 > end) throw UNSUPPORTED;
        ascii(out, `"${buffer.toString('hex', index, index + 12)}"`);
        index += 12;
        break;
      case Type.Boolean: {
        const flag = buffer[index++];
        if (flag !== 0 && flag !== 1) throw UNSUPPORTED;
        ascii(out, flag === 1 ? 'true' : 'false');
        break;
      }
      case Type.Date: {
        // As the decoder computes it (Long.toNumber), then Date's own range check and ISO text.
        const date = new Date(buffer.readInt32LE(index + 4) * TWO_POW_32 + buffer.readUInt32LE(index));
        index += 8;
        ascii(out, Number.isNaN(date.getTime()) ? 'null' : `"${date.toISOString()}"`);
        break;
      }
      case Type.Null:
        ascii(out, 'null');
        break;
      case Type.Int32:
        ascii(out, String(buffer.readInt32LE(index)));
        index += 4;
        break;
      case Type.Timestamp:
        // Low word: the increment; high word: the seconds.
        ascii(out, `{"t":${buffer.readUInt32LE(index + 4)},"i":${buffer.readUInt32LE(index)}}`);
        index += 8;
        break;
      case Type.Int64:
        ascii(out, int64Json(buffer.readInt32LE(index + 4), buffer.readUInt32LE(index), options.longsAsNumbers));
        index += 8;
        break;
      case Type.MinKey:
        ascii(out, '"MinKey"');
        break;
      case Type.MaxKey:
        ascii(out, '"MaxKey"');
        break;
      default:
        throw UNSUPPORTED;
    }
    if (index > end) throw UNSUPPORTED;
  }
}

/**
 * A string value's JSON. ASCII with nothing to escape (most text) is its own JSON: its bytes
 * are copied. Other text is decoded as the decoder decodes it (invalid bytes become U+FFFD); when
 * UTF-8 is validated, a U+FFFD may be the decoder's error to raise, so that string goes back to it.
 */
function writeString(buffer: Buffer, start: number, end: number, validateUtf8: boolean, out: Output): void {
  if (plainTextEnd(buffer, start, end) === end) {
    out.bytes[out.at++] = QUOTE;
    if (end - start <= SMALL_COPY) copySmall(buffer, start, end, out);
    else out.at += buffer.copy(out.bytes, out.at, start, end);
    out.bytes[out.at++] = QUOTE;
    return;
  }
  const text = buffer.toString('utf8', start, end);
  if (validateUtf8 && text.includes('\ufffd')) throw UNSUPPORTED;
  utf8(out, JSON.stringify(text));
}

/** 1 for the bytes a JSON string cannot hold as they are: control characters, `"`, `\`, and non-ASCII. */
const NOT_PLAIN = new Uint8Array(256).map((_, byte) => (byte < 0x20 || byte === 0x22 || byte === 0x5c || byte >= 0x80 ? 1 : 0));
/** From this length a string is scanned four bytes at a time (below, setting that up costs more than it saves). */
const WORD_SCAN_FROM = 32;
/** Up to this many bytes are copied by a loop: Buffer#copy makes a view of its own for each call. */
const SMALL_COPY = 24;
const LOW_BITS = 0x01010101;
const HIGH_BITS = 0x80808080 | 0;

/**
 * The index of the first byte in [start, end) that is not plain (see NOT_PLAIN), or `end`. Text
 * is most of a record, so long text is scanned a 32-bit word at a time: a word holds such a byte
 * when one of its bytes is 0x80 or more, less than 0x20, 0x22 or 0x5c, which the bit tricks below
 * tell for all four bytes at once (each may report a word that holds none, never miss one: the
 * bytes of a reported word are then looked at one by one).
 */
function plainTextEnd(buffer: Buffer, start: number, end: number): number {
  let index = start;
  if (end - start >= WORD_SCAN_FROM) {
    // Int32Array views must start on a multiple of 4 of the underlying memory.
    while ((buffer.byteOffset + index) & 3) {
      if (NOT_PLAIN[buffer[index] as number]) return index;
      index += 1;
    }
    const count = (end - index) >> 2;
    const words = new Int32Array(buffer.buffer, buffer.byteOffset + index, count);
    let word = 0;
    for (; word < count; word += 1) {
      const w = words[word] as number;
      const quote = w ^ 0x22222222;
      const backslash = w ^ 0x5c5c5c5c;
      if ((w | ((w - 0x20202020) & ~w) | ((quote - LOW_BITS) & ~quote) | ((backslash - LOW_BITS) & ~backslash)) & HIGH_BITS) break;
    }
    index += word << 2;
  }
  while (index < end && NOT_PLAIN[buffer[index] as number] === 0) index += 1;
  return index;
}

/** Copies bytes [start, end) of `buffer` to the output, byte by byte (for the short pieces of a record). */
function copySmall(buffer: Buffer, start: number, end: number, out: Output): void {
  const bytes = out.bytes;
  let at = out.at;
  for (let index = start; index < end; index += 1) bytes[at++] = buffer[index] as number;
  out.at = at;
}

/**
 * Whether a JavaScript object would treat the key as an array index (canonical decimal below
 * 2^32 - 1); such keys are ordered first, numerically. The bytes are known to be digits.
 */
function isArrayIndex(buffer: Buffer, start: number, end: number): boolean {
  const length = end - start;
  if (length === 0 || length > 10 || (length > 1 && buffer[start] === 0x30)) return false;
  return Number(buffer.toString('latin1', start, end)) < TWO_POW_32 - 1;
}

/**
 * The keys of an object seen so far, to find a duplicate (which needs the decoder). While every
 * key is plain ASCII and there are few, they are kept as the start and end of their bytes and
 * compared byte by byte, so an ordinary record makes no key strings; otherwise as the names the
 * decoder makes of them (two different invalid UTF-8 sequences can decode to the same name).
 */
type SeenKeys = number[] | string[] | Set<string>;

function rememberPlain(seen: SeenKeys | undefined, buffer: Buffer, start: number, end: number): SeenKeys {
  if (seen === undefined) return [start, end];
  if (!isRangeList(seen) || seen.length >= KEY_LIST_LIMIT * 2)
    return remember(keyNames(seen, buffer), buffer.toString('latin1', start, end));
  const length = end - start;
  for (let key = 0; key < seen.length; key += 2) {
    const from = seen[key] as number;
    if ((seen[key + 1] as number) - from !== length) continue;
    let same = true;
    for (let index = 0; index < length && same; index += 1) same = buffer[from + index] === buffer[start + index];
    if (same) throw UNSUPPORTED;
  }
  seen.push(start, end);
  return seen;
}

/** A list of byte ranges (numbers) rather than names; an empty list is never kept. */
const isRangeList = (seen: SeenKeys): seen is number[] => Array.isArray(seen) && typeof seen[0] === 'number';

/** The keys seen so far as names (byte ranges of plain keys are ASCII: their latin1 text is their name). */
function keyNames(seen: SeenKeys | undefined, buffer: Buffer): string[] | Set<string> | undefined {
  if (seen === undefined || !isRangeList(seen)) return seen;
  const names: string[] = [];
  for (let key = 0; key < seen.length; key += 2) names.push(buffer.toString('latin1', seen[key], seen[key + 1]));
  return names;
}

/** Adds a key to an object's keys seen so far; a duplicate needs the decoder. */
function remember(seen: string[] | Set<string> | undefined, name: string): string[] | Set<string> {
  if (seen === undefined) return [name];
  if (Array.isArray(seen)) {
    if (seen.includes(name)) throw UNSUPPORTED;
    seen.push(name);
    return seen.length > KEY_LIST_LIMIT ? new Set(seen) : seen;
  }
  if (seen.has(name)) throw UNSUPPORTED;
  seen.add(name);
  return seen;
}

/**
 * As the plain tree renders an int64: a number when it is a safe integer, else its exact decimal
 * text; ±2^53 is the decoder's number when longs are promoted (see BsonJsonOptions).
 */
function int64Json(high: number, low: number, longsAsNumbers: boolean): string {
  const number = high * TWO_POW_32 + low;
  if (Number.isSafeInteger(number)) return String(number);
  if (longsAsNumbers && low === 0 && (high === HIGH_OF_2_POW_53 || high === HIGH_OF_MINUS_2_POW_53)) return String(number);
  return `"${((BigInt(high) << 32n) | BigInt(low)).toString()}"`;
}

/** The canonical dashed form of a UUID's 32 hex digits. */
function uuidText(hex: string): string {
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
