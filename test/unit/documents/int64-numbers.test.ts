import { Code, Decimal128, Double, Int32, Long, ObjectId, Timestamp } from 'mongodb';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Document } from 'mongodb';
import { commandRecords } from '../../../src/documents/batch-insert.js';
import { parseJsonBody } from '../../../src/documents/extended-json.js';
import { Int64Conversion, int64Numbers, isInt64Free, wideInteger } from '../../../src/documents/int64-numbers.js';
import { parseRecordJson } from '../../../src/documents/number-literals.js';

describe('int64Numbers: the Longs of a record, made as it goes to the driver', () => {
  it.each([
    [0, 0],
    [-0, -0],
    [2147483647, 2147483647],
    [-2147483648, -2147483648],
    [2.5, 2.5],
    [-1e-300, -1e-300],
    [2147483648, Long.fromNumber(2147483648)],
    [-2147483649, Long.fromNumber(-2147483649)],
    [123456789012, Long.fromNumber(123456789012)],
    [Number.MAX_SAFE_INTEGER, Long.fromNumber(Number.MAX_SAFE_INTEGER)],
    [-(2 ** 63), new Double(-(2 ** 63))],
    [2 ** 63, new Double(2 ** 63)],
    [1e300, new Double(1e300)],
  ])('stores %s as %o', (number, expected) => {
    expect(int64Numbers({ x: number })).toEqual({ x: expected });
  });

  it('converts at any depth and inside a Code scope, and leaves every other value as it is', () => {
    const id = new ObjectId();
    const date = new Date(1_700_000_000_000);
    const keep = {
      id,
      date,
      long: Long.fromString('9007199254740993'),
      double: new Double(3),
      int: new Int32(5),
      decimal: Decimal128.fromString('1.5'),
      ts: new Timestamp({ t: 4_000_000_000, i: 1 }),
      s: '123456789012',
      b: true,
      n: null,
    };
    const record = { ...keep, a: [1, [2, { deep: 3_000_000_000 }]], code: new Code('x', { n: 5_000_000_000, m: 1 }) };
    const stored = int64Numbers(record);
    expect(stored).toMatchObject(keep);
    for (const key of Object.keys(keep)) expect(stored[key as keyof typeof keep]).toBe(keep[key as keyof typeof keep]);
    expect(stored.a).toEqual([1, [2, { deep: Long.fromNumber(3_000_000_000) }]]);
    expect(stored.code).toBeInstanceOf(Code);
    expect(stored.code.code).toBe('x');
    expect(stored.code.scope).toEqual({ n: Long.fromNumber(5_000_000_000), m: 1 });
  });

  it('never changes its input: containers with something to convert are copied, the rest shared', () => {
    const untouched = { s: 'x', list: [1, 2.5] };
    const record = { n: 123456789012, untouched, list: [1, 4_000_000_000, 3] };
    const stored = int64Numbers(record);
    expect(record).toEqual({ n: 123456789012, untouched: { s: 'x', list: [1, 2.5] }, list: [1, 4_000_000_000, 3] });
    expect(stored).not.toBe(record);
    expect(stored.untouched).toBe(untouched);
    expect(stored.list).toEqual([1, Long.fromNumber(4_000_000_000), 3]);
    const plain = { a: 1, b: [2, 'x'], c: { d: 2.5 } };
    expect(int64Numbers(plain)).toBe(plain);
  });

  it('keeps a "__proto__" key an own property of the copy', () => {
    const record = JSON.parse('{"__proto__": {"p": 1}, "n": 123456789012}') as Record<string, unknown>;
    const stored = int64Numbers(record);
    expect(Object.getPrototypeOf(stored)).toBe(Object.prototype);
    expect(Object.hasOwn(stored, '__proto__')).toBe(true);
    expect(stored.n).toEqual(Long.fromNumber(123456789012));
  });

  it('makes the Long of every safe integer exactly (as Long.fromNumber), and a Double beyond int64', () => {
    fc.assert(
      fc.property(fc.oneof(fc.maxSafeInteger(), fc.double({ noNaN: true, noDefaultInfinity: true })), (number) => {
        const stored: unknown = int64Numbers<unknown[]>([number])[0];
        if (!Number.isInteger(number) || (number | 0) === number) expect(stored).toBe(number);
        else if (Math.abs(number) >= 2 ** 63) expect(stored).toEqual(new Double(number));
        else {
          expect(stored).toBeInstanceOf(Long);
          expect((stored as Long).toString()).toBe(BigInt(number).toString());
        }
        if (typeof stored !== 'number') expect(stored).toEqual(wideInteger(number));
      }),
      { numRuns: 2000 },
    );
  });
});

describe('Int64Conversion: the Longs it makes, counted', () => {
  it('counts each Long and Double it makes across the values it converts, and nothing else', () => {
    const conversion = new Int64Conversion();
    const first = conversion.of({ a: 123456789012, b: [1, 2.5, 4_000_000_000, { c: 2 ** 63 }], s: '123456789012' });
    expect(conversion.made).toBe(3);
    expect(first).toEqual({
      a: Long.fromNumber(123456789012),
      b: [1, 2.5, Long.fromNumber(4_000_000_000), { c: new Double(2 ** 63) }],
      s: '123456789012',
    });
    conversion.of({ n: -2147483649, kept: Long.fromNumber(5), small: 7 });
    expect(conversion.made).toBe(4);
    const plain = { a: 1, b: [2, 'x'] };
    expect(conversion.of(plain)).toBe(plain);
    expect(conversion.made).toBe(4);
  });
});

describe('bodies the parser found free of int64s go to the driver unwalked', () => {
  const commandOf = (text: string): { body: Document[]; records: Document[] } => {
    const body = parseJsonBody(parseRecordJson(text)) as Document[];
    return { body, records: commandRecords(body, 0, body.length) };
  };

  it('hands an array of int32s, fractions and strings over as it is, record by record', () => {
    const { body, records } = commandOf('[{"a": 1, "b": -2147483648, "c": 2.5, "d": "123456789012"}, {"e": [2147483647, {"f": 3.0}]}]');
    expect(isInt64Free(body)).toBe(true);
    expect(records).toHaveLength(2);
    records.forEach((record, i) => expect(record).toBe(body[i]));
  });

  it.each([
    ['at the top', '[{"a": 1}, {"n": 2147483648}]'],
    ['deep in an array', '[{"a": [1, [2, {"n": -2147483649}]]}]'],
    ['in a Code scope', '[{"c": {"$code": "x", "$scope": {"n": 123456789012}}}]'],
    ['beside a wrapper', '[{"d": {"$date": "2024-01-01T00:00:00Z"}, "n": 123456789012}]'],
  ])('walks a body with an integer beyond int32 %s, and makes it a Long', (_where, text) => {
    const { body, records } = commandOf(text);
    expect(isInt64Free(body)).toBe(false);
    expect(JSON.stringify(records, (_k, v: unknown) => (v instanceof Long ? 'LONG' : v))).toContain('LONG');
  });

  it('builds the same command records with the skip as a walk of every record would (property)', () => {
    const number = fc.oneof(
      fc.integer(),
      fc.integer({ min: -(2 ** 40), max: 2 ** 40 }),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
    );
    const value = fc.letrec((tie) => ({
      value: fc.oneof({ depthSize: 'small' }, number, fc.string(), fc.boolean(), fc.constant(null), tie('array'), tie('object')),
      array: fc.array(tie('value'), { maxLength: 4 }),
      object: fc.dictionary(fc.stringMatching(/^[a-z]{1,4}$/), tie('value'), { maxKeys: 4 }),
    }));
    fc.assert(
      fc.property(
        fc.array(fc.dictionary(fc.stringMatching(/^[a-z]{1,4}$/), value.value, { maxKeys: 4 }), { minLength: 1, maxLength: 5 }),
        (records) => {
          const { body, records: built } = commandOf(JSON.stringify(records));
          expect(built).toEqual(body.map((record) => int64Numbers({ ...record })));
        },
      ),
    );
  });
});
