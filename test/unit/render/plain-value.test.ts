import {
  Binary,
  BSONRegExp,
  BSONSymbol,
  Code,
  DBRef,
  Decimal128,
  Double,
  Int32,
  Long,
  MaxKey,
  MinKey,
  ObjectId,
  Timestamp,
  UUID,
} from 'mongodb';
import { describe, expect, it } from 'vitest';
import { toPlainValue } from '../../../src/render/index.js';

describe('toPlainValue: BSON and driver values', () => {
  it('ObjectId becomes its 24-hex string', () => {
    expect(toPlainValue(new ObjectId('64b7f0c2a1b2c3d4e5f60718'))).toBe('64b7f0c2a1b2c3d4e5f60718');
  });

  it('Date becomes ISO-8601, an invalid Date null', () => {
    expect(toPlainValue(new Date(Date.UTC(2024, 0, 2, 3, 4, 5, 6)))).toBe('2024-01-02T03:04:05.006Z');
    expect(toPlainValue(new Date(Number.NaN))).toBeNull();
  });

  it('Decimal128 becomes its exact decimal string', () => {
    expect(toPlainValue(Decimal128.fromString('1.10'))).toBe('1.10');
    expect(toPlainValue(Decimal128.fromString('12345678901234567890.123456789'))).toBe('12345678901234567890.123456789');
  });

  it('Long becomes a number when safe, else a decimal string', () => {
    expect(toPlainValue(Long.fromNumber(42))).toBe(42);
    expect(toPlainValue(Long.fromString('-9007199254740991'))).toBe(-9007199254740991);
    expect(toPlainValue(Long.fromString('9007199254740993'))).toBe('9007199254740993');
    expect(toPlainValue(Long.fromString('-9223372036854775808'))).toBe('-9223372036854775808');
    expect(toPlainValue(Long.fromString('18446744073709551615', true))).toBe('18446744073709551615');
  });

  it('bigint follows the same rule as Long', () => {
    expect(toPlainValue(7n)).toBe(7);
    expect(toPlainValue(2n ** 60n)).toBe('1152921504606846976');
  });

  it('Int32 and Double become numbers; a non-finite Double becomes its Extended JSON wrapper, never null', () => {
    expect(toPlainValue(new Int32(-7))).toBe(-7);
    expect(toPlainValue(new Double(2.5))).toBe(2.5);
    expect(toPlainValue(new Double(Number.NaN))).toEqual({ $numberDouble: 'NaN' });
    expect(toPlainValue(new Double(Number.POSITIVE_INFINITY))).toEqual({ $numberDouble: 'Infinity' });
    expect(toPlainValue(Number.NEGATIVE_INFINITY)).toEqual({ $numberDouble: '-Infinity' });
  });

  it('Binary, Buffer and Uint8Array become base64', () => {
    expect(toPlainValue(new Binary(Buffer.from('hello')))).toBe('aGVsbG8=');
    expect(toPlainValue(Buffer.from([0, 1, 2, 255]))).toBe('AAEC/w==');
    expect(toPlainValue(new Uint8Array([104, 105]))).toBe('aGk=');
    // A view into a larger buffer: only its own bytes.
    const backing = new Uint8Array([1, 2, 3, 104, 105, 4]);
    expect(toPlainValue(backing.subarray(3, 5))).toBe('aGk=');
    expect(toPlainValue(new Binary(Buffer.from([9, 9]), Binary.SUBTYPE_USER_DEFINED))).toBe('CQk=');
  });

  it('UUID (and a subtype-4 Binary) becomes the canonical dashed string', () => {
    const text = '0e5d1b38-5c9a-4f5e-8d2a-3b1c2d4e5f60';
    expect(toPlainValue(new UUID(text))).toBe(text);
    const bytes = Buffer.from(text.replace(/-/g, ''), 'hex');
    expect(toPlainValue(new Binary(bytes, Binary.SUBTYPE_UUID))).toBe(text);
  });

  it('Timestamp becomes {t, i}', () => {
    expect(toPlainValue(new Timestamp({ t: 1700000000, i: 7 }))).toEqual({ t: 1700000000, i: 7 });
  });

  it('RegExp and BSONRegExp become {$regex, $options}', () => {
    expect(toPlainValue(/ab+c/gi)).toEqual({ $regex: 'ab+c', $options: 'gi' });
    expect(toPlainValue(new BSONRegExp('^x.*', 'i'))).toEqual({ $regex: '^x.*', $options: 'i' });
  });

  it('MinKey and MaxKey become strings', () => {
    expect(toPlainValue(new MinKey())).toBe('MinKey');
    expect(toPlainValue(new MaxKey())).toBe('MaxKey');
  });

  it('Code, DBRef and BSONSymbol get Extended-JSON-like shapes', () => {
    expect(toPlainValue(new Code('return x', { x: new Int32(1) }))).toEqual({ $code: 'return x', $scope: { x: 1 } });
    expect(toPlainValue(new Code('f()'))).toEqual({ $code: 'f()' });
    expect(toPlainValue(new DBRef('things', new ObjectId('64b7f0c2a1b2c3d4e5f60718'), 'db1'))).toEqual({
      $ref: 'things',
      $id: '64b7f0c2a1b2c3d4e5f60718',
      $db: 'db1',
    });
    expect(toPlainValue(new BSONSymbol('sym'))).toBe('sym');
  });
});

describe('toPlainValue: structure', () => {
  it('recurses into arrays and objects', () => {
    const document = {
      _id: new ObjectId('64b7f0c2a1b2c3d4e5f60718'),
      tags: ['a', new Int32(3), [new Date(Date.UTC(2020, 5, 1))]],
      nested: { big: Long.fromString('9223372036854775807'), when: new Date(Date.UTC(1999, 11, 31, 23, 59, 59)) },
    };
    expect(toPlainValue(document)).toEqual({
      _id: '64b7f0c2a1b2c3d4e5f60718',
      tags: ['a', 3, ['2020-06-01T00:00:00.000Z']],
      nested: { big: '9223372036854775807', when: '1999-12-31T23:59:59.000Z' },
    });
  });

  it('follows JSON.stringify for undefined, functions and symbols', () => {
    const value = { a: undefined, b: () => 1, c: Symbol('s'), d: [undefined, () => 1, 2] };
    expect(toPlainValue(value)).toEqual({ d: [null, null, 2] });
    expect(Object.keys(toPlainValue(value) as object)).toEqual(['d']);
    expect(toPlainValue(undefined)).toBeNull();
  });

  it('keeps plain values and key order as they are', () => {
    const value = { z: 1, a: 'x', m: [true, false, null], n: { '': 0 } };
    const plain = toPlainValue(value);
    expect(plain).toEqual(value);
    expect(JSON.stringify(plain)).toBe('{"z":1,"a":"x","m":[true,false,null],"n":{"":0}}');
  });

  it('keeps a __proto__ key as an ordinary own key without touching any prototype', () => {
    const hostile = JSON.parse('{"__proto__": {"polluted": true}, "ok": 1}') as unknown;
    const plain = toPlainValue(hostile) as Record<string, unknown>;
    expect(Object.getPrototypeOf(plain)).toBe(Object.prototype);
    expect((plain as { polluted?: unknown }).polluted).toBeUndefined();
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
    expect(Object.keys(plain)).toEqual(['__proto__', 'ok']);
    expect(JSON.parse(JSON.stringify(plain))).toStrictEqual(JSON.parse('{"__proto__": {"polluted": true}, "ok": 1}'));
  });

  it('treats a stored field named _bsontype on a plain object as data', () => {
    expect(toPlainValue({ _bsontype: 'ObjectId', id: 5 })).toEqual({ _bsontype: 'ObjectId', id: 5 });
  });

  it('uses toJSON of other objects and own keys of class instances', () => {
    class Point {
      constructor(
        readonly x: number,
        readonly y: number,
      ) {}
    }
    expect(toPlainValue({ u: new URL('https://example.org/a?b=1'), p: new Point(1, 2) })).toEqual({
      u: 'https://example.org/a?b=1',
      p: { x: 1, y: 2 },
    });
  });

  it('fails cleanly on a cyclic value instead of overflowing the stack', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => toPlainValue(cyclic)).toThrow(RangeError);
  });
});
