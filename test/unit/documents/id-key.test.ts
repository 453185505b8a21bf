/** idKey: the same key exactly for the `_id` values the engine holds to be one `_id`. */
import { BSONSymbol, Binary, Decimal128, Double, Int32, Long, MaxKey, ObjectId, Timestamp, UUID } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { idKey } from '../../../src/documents/id-key.js';

const HEX = '5f0c1d2e3f405162738495a6';
const UUID_HEX = '0123456789abcdef0123456789abcdef';

describe('idKey', () => {
  it.each([
    ['int32 1 and double 1.0', 1, new Double(1)],
    ['a number and an Int32', 7, new Int32(7)],
    ['an int64 within 2^53 and the number it is read back as', Long.fromString('5000000000'), 5_000_000_000],
    ['an int64 beyond 2^53 and itself read back', Long.fromString('1152921504606846977'), Long.fromString('1152921504606846977')],
    ['an int64 and the whole double of the same value', Long.fromString('1152921504606846976'), 2 ** 60],
    ['a decimal 1.00 and the integer 1', Decimal128.fromString('1.00'), 1],
    ['a decimal 1.5E+2 and 150', Decimal128.fromString('1.5E+2'), 150],
    ['a decimal 0.5 and the double 0.5', Decimal128.fromString('0.50'), 0.5],
    ['-0 and 0', -0, 0],
    ['a Double fraction and the number', new Double(2.25), 2.25],
    ['an ObjectId and the same ObjectId read back', ObjectId.createFromHexString(HEX), ObjectId.createFromHexString(HEX)],
    ['a string and a symbol of the same text', 'abc', new BSONSymbol('abc')],
    ['two dates of the same instant', new Date(86_400_000), new Date(86_400_000)],
    ['a UUID and the Binary it is read back as', new UUID(UUID_HEX), new Binary(Buffer.from(UUID_HEX, 'hex'), 4)],
    ['embedded documents whose numbers differ only in type', { a: 1, b: { c: new Double(2) } }, { a: Long.fromNumber(1), b: { c: 2 } }],
    ['NaN as a number and as a decimal', Number.NaN, Decimal128.fromString('NaN')],
  ])('%s are one key', (_what, a, b) => {
    expect(idKey(a)).toBe(idKey(b));
  });

  it.each([
    ['the string "1" and the number 1', '1', 1],
    ['an ObjectId and its hex string', ObjectId.createFromHexString(HEX), HEX],
    ['a Timestamp and the Long of the same bits', Timestamp.fromBits(1, 2), Long.fromBits(1, 2)],
    ['0.1 as a double and 0.1 as a decimal (the double is not exactly 0.1)', 0.1, Decimal128.fromString('0.1')],
    ['two int64 one apart beyond 2^53', Long.fromString('9007199254740993'), Long.fromString('9007199254740992')],
    ['a date and its milliseconds', new Date(5), 5],
    ['documents with the same fields in another order', { a: 1, b: 2 }, { b: 2, a: 1 }],
    ['null and the string "null"', null, 'null'],
    ['a UUID and a Binary of another subtype with the same bytes', new UUID(UUID_HEX), new Binary(Buffer.from(UUID_HEX, 'hex'), 0)],
    ['MaxKey and a string', new MaxKey(), 'MaxKey'],
    ['infinity and negative infinity', Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY],
  ])('%s are different keys', (_what, a, b) => {
    expect(idKey(a)).not.toBe(idKey(b));
  });
});
