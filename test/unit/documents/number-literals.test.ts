import fc from 'fast-check';
import { Double, Int32, Long } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { parseJsonBody } from '../../../src/documents/extended-json.js';
import { parseRecordJson, typedLiteral } from '../../../src/documents/number-literals.js';
import { doubleText } from '../../../src/render/double-text.js';

/** A record body as the records routes read it: the text parsed, then its Extended JSON revived. */
const readBody = (text: string): unknown => parseJsonBody(parseRecordJson(text));

/** The BSON type the driver stores a revived value as (a JavaScript number: int32 when whole and in range, else double). */
function bsonType(value: unknown): string {
  if (value instanceof Double) return 'double';
  if (value instanceof Long) return 'long';
  if (value instanceof Int32) return 'int';
  if (typeof value === 'number') return Number.isInteger(value) && value >= -(2 ** 31) && value < 2 ** 31 ? 'int' : 'double';
  return typeof value;
}

/** Every number in a revived value as a JavaScript number, to compare with JSON.parse. */
function untyped(value: unknown): unknown {
  if (value instanceof Double) return value.value;
  if (value instanceof Long) return value.toNumber();
  if (Array.isArray(value)) return value.map(untyped);
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, untyped(v)]));
  return value;
}

describe('number literals in a record body', () => {
  it.each([
    ['3.0', 'double', 3],
    ['-0.0', 'double', -0],
    ['1e3', 'double', 1000],
    ['2.5E-3', 'double', 0.0025],
    ['1.0e400', 'double', Infinity],
    ['0.000', 'double', 0],
    ['10.00', 'double', 10],
    ['0.50', 'double', 0.5],
    ['-12.0001', 'double', -12.0001],
    ['3', 'int', 3],
    ['-0', 'int', -0],
    ['123456789', 'int', 123456789],
    ['2147483647', 'int', 2147483647],
    ['-2147483648', 'int', -2147483648],
    ['2147483648', 'long', 2147483648],
    ['-2147483649', 'long', -2147483649],
    ['9223372036854775807', 'long', 2 ** 63],
    ['9223372036854775808', 'double', 2 ** 63],
  ])('%s is stored as %s', (literal, type, value) => {
    const record = readBody(`{"x": ${literal}}`) as { x: unknown };
    expect(bsonType(record.x)).toBe(type);
    expect(untyped(record.x)).toBe(value);
  });

  it('keeps the exact digits of an int64', () => {
    const record = readBody('{"x": 9007199254740993}') as { x: Long };
    expect(record.x.toString()).toBe('9007199254740993');
  });

  it('types literals at any depth, in arrays and beside integer-like keys, and leaves strings alone', () => {
    const record = readBody(
      '[{"2": 1.5, "1": 2, "a": [1, 2.0, {"b": -3e0}], "s": "4.0 and \\"5.0\\" \\\\", "t": "\\\\"}, 6.0]',
    ) as unknown[];
    const first = record[0] as Record<string, unknown>;
    // Not whole: left a number, which the driver stores as a double.
    expect(first['2']).toBe(1.5);
    expect(first['1']).toBe(2);
    expect(first.a).toEqual([1, new Double(2), { b: new Double(-3) }]);
    expect(first.s).toBe('4.0 and "5.0" \\');
    expect(first.t).toBe('\\');
    expect(record[1]).toEqual(new Double(6));
  });

  it('reads numbers inside Extended JSON wrappers as the wrapper wants them', () => {
    const record = readBody(
      '{"d": {"$date": 1.7e12}, "big": {"$date": 1700000000000}, "ts": {"$timestamp": {"t": 1.0, "i": 2}}}',
    ) as Record<string, unknown>;
    expect(record.d).toEqual(new Date(1.7e12));
    expect(record.big).toEqual(new Date(1700000000000));
    expect(record.ts).toMatchObject({ t: 1, i: 2 });
  });

  it('is JSON.parse for text without such literals (the same object, no rewrite)', () => {
    expect(parseRecordJson('{"a": 1, "b": "2.5", "c": [true, null]}')).toEqual({ a: 1, b: '2.5', c: [true, null] });
    expect(typedLiteral('12')).toBeUndefined();
    expect(typedLiteral('1.5.3')).toBeUndefined();
    expect(typedLiteral('2.5')).toBeUndefined();
    expect(typedLiteral('2.0')).toBe('{"$numberDouble":"2.0"}');
  });

  it('has the values JSON.parse has, for any JSON text', () => {
    fc.assert(
      // Keys that could pollute prototypes are refused in any body (extended-json.ts), so not compared here.
      fc.property(
        fc.json({ depthSize: 'small' }).filter((text) => !/"(__proto__|constructor)"/.test(text)),
        (text) => {
          expect(untyped(readBody(text))).toEqual(untyped(JSON.parse(text) as unknown));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('types each number as its literal says, for any value and any number literal', () => {
    const literal = fc.oneof(
      fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => ({ text: doubleText(n), type: 'double' })),
      fc.integer().map((n) => ({ text: String(n), type: n >= -(2 ** 31) && n < 2 ** 31 ? 'int' : 'long' })),
      fc
        .bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n })
        .map((n) => ({ text: String(n), type: n >= -(2n ** 31n) && n < 2n ** 31n ? 'int' : 'long' })),
    );
    fc.assert(
      fc.property(fc.array(fc.tuple(literal, fc.string())), (entries) => {
        // Each literal next to a string that may hold digits, quotes and backslashes.
        const text = `[${entries.map(([{ text: t }, s]) => `${t}, ${JSON.stringify(s)}`).join(', ')}]`;
        const values = readBody(text) as unknown[];
        entries.forEach(([{ type, text: t }, s], i) => {
          expect(bsonType(values[2 * i]), t).toBe(type);
          expect(values[2 * i + 1]).toBe(s);
        });
      }),
      { numRuns: 300 },
    );
  });

  it("refuses exactly the text JSON.parse refuses, with JSON.parse's message", () => {
    const nearlyJson = fc
      .tuple(fc.json(), fc.nat(), fc.constantFrom('', '.', 'e', '"', '\\', '-', '1.5', ']', '{'))
      .map(([text, at, insert]) => {
        const cut = at % (text.length + 1);
        return text.slice(0, cut) + insert + text.slice(cut);
      });
    fc.assert(
      fc.property(nearlyJson, (text) => {
        let expected: string | undefined;
        try {
          JSON.parse(text);
        } catch (error) {
          expected = (error as Error).message;
        }
        if (expected === undefined) expect(() => parseRecordJson(text)).not.toThrow();
        else expect(() => parseRecordJson(text)).toThrow(expected);
      }),
      { numRuns: 1000 },
    );
  });
});
