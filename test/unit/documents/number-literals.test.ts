import fc from 'fast-check';
import { Double, Int32, Long } from 'mongodb';
import { describe, expect, it, vi } from 'vitest';
import { parseJsonBody } from '../../../src/documents/extended-json.js';
import { int64Numbers } from '../../../src/documents/int64-numbers.js';
import { MAX_NUMBER_LITERAL_LENGTH, parseRecordJson, typedLiteral } from '../../../src/documents/number-literals.js';
import { ApiError } from '../../../src/errors.js';
import { doubleText } from '../../../src/render/double-text.js';

/** A record body as the records routes read it: the text parsed, then its Extended JSON revived. */
const parsedBody = (text: string): unknown => parseJsonBody(parseRecordJson(text));
/** ...and as the store hands it to the driver (int64Numbers): what each literal is stored as. */
const readBody = (text: string): unknown => int64Numbers(parsedBody(text));

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

  it('keeps strings that hold what looks like a whole double after ":", "," or "[", whichever mark the text allows', () => {
    // Whole doubles are first marked without following the strings; a mark in a string must
    // never survive into the value, nor a whole double go untyped (a NUL or a backslash in a
    // string changes the mark, see Mark in number-literals.ts).
    const piece = fc.constantFrom('[', ',', ':', ' ', '3.0', '-0.0', '1e3', '2.50', '7', '"', '\\', 'x', '\u007f', '\u0000');
    const text = fc.array(piece, { maxLength: 8 }).map((pieces) => pieces.join(''));
    const literal = fc.constantFrom('3.0', '-0.0', '1e3', '2.5', '12', '1.0e0');
    fc.assert(
      fc.property(fc.array(fc.tuple(text, literal), { maxLength: 6 }), (entries) => {
        // A key may hold the same text, but no NUL (refused in any key).
        const key = (t: string): string => `k${t.replaceAll('\u0000', '')}`;
        const body = `{"list": [${entries.map(([t, l]) => `{${JSON.stringify(key(t))}: ${l}, "s": ${JSON.stringify(t)}}`).join(', ')}], "last": 4.0}`;
        const parsed = readBody(body) as { list: Record<string, unknown>[]; last: unknown };
        expect(parsed.last).toEqual(new Double(4));
        entries.forEach(([t, l], i) => {
          expect(parsed.list[i]!.s).toBe(t);
          expect(bsonType(parsed.list[i]![key(t)]), `${t}: ${l}`).toBe(l === '12' ? 'int' : 'double');
        });
      }),
      { numRuns: 500 },
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
        if (expected !== undefined) {
          expect(() => parseRecordJson(text)).toThrow(expected);
          return;
        }
        // JSON, refused only for a literal a double cannot keep (an insert may make `1e400`).
        try {
          parseRecordJson(text);
        } catch (error) {
          expect((error as ApiError).code).toMatch(/^number_(out_of_range|too_long)$/);
        }
      }),
      { numRuns: 1000, ...(process.env.FC_SEED === undefined ? {} : { seed: Number(process.env.FC_SEED) }) },
    );
  });
});

/** The ApiError parseRecordJson throws for `text` (the test fails when it throws nothing or something else). */
function refusal(text: string): ApiError {
  try {
    readBody(text);
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error(`accepted: ${text.slice(0, 80)}`);
}

describe('number literals a double cannot keep', () => {
  it('refuses a 15,000,000-digit integer as too long, naming its field, without converting it', () => {
    const bigInt = vi.spyOn(globalThis, 'BigInt');
    try {
      const error = refusal(`{"readings": {"raw": [1, 2, ${'7'.repeat(15_000_000)}]}}`);
      expect(error.status).toBe(400);
      expect(error.code).toBe('number_too_long');
      expect(error.detail).toMatchObject({ path: 'readings.raw.2', length: 15_000_000, limit: MAX_NUMBER_LITERAL_LENGTH });
      expect(error.message).toContain('(at readings.raw.2)');
      expect(bigInt).not.toHaveBeenCalled();
    } finally {
      bigInt.mockRestore();
    }
  });

  it('accepts a literal of exactly the bound and refuses one character more (integers, fractions, negative)', () => {
    const digits = (n: number) => '1'.repeat(n);
    expect(bsonType((readBody(`{"x": ${digits(300)}}`) as { x: unknown }).x)).toBe('double');
    expect(refusal(`{"x": ${digits(MAX_NUMBER_LITERAL_LENGTH + 1)}}`).code).toBe('number_too_long');
    expect(refusal(`{"x": -0.${digits(MAX_NUMBER_LITERAL_LENGTH - 2)}}`).code).toBe('number_too_long');
    expect(refusal(`[0.${digits(MAX_NUMBER_LITERAL_LENGTH)}]`).detail).toMatchObject({ path: '0' });
  });

  it('finds a fraction over the bound wherever it starts, among integers of every length', () => {
    // The search for long runs of digits reads only some characters; a run may start at any offset from them.
    const fraction = `0.${'3'.repeat(MAX_NUMBER_LITERAL_LENGTH)}`;
    for (let pad = 0; pad < 300; pad += 1) {
      const before = Array.from({ length: pad }, (_, i) => 10 ** (i % 16)).join(',');
      const text = `{"a": [${before}${pad === 0 ? '' : ','}${fraction}, 1]}`;
      expect(refusal(text).detail, `after ${pad} integers`).toMatchObject({ path: `a.${pad}` });
    }
  });

  it.each([
    ['1e999', 'too large'],
    ['-1e999', 'too large'],
    ['2.0e308', 'too large'],
    ['1.8e308', 'too large'],
    [`1${'0'.repeat(309)}`, 'too large'],
    ['1e-999', 'too small'],
    ['-2.5e-400', 'too small'],
  ])('refuses %s as out of range (%s), saying how to send infinity', (literal, what) => {
    const error = refusal(`[{"a": 1}, {"b": {"c": ${literal}}}]`);
    expect(error.status).toBe(400);
    expect(error.code).toBe('number_out_of_range');
    expect(error.detail).toMatchObject({ path: '1.b.c' });
    expect(error.message).toContain(what);
    if (what === 'too large') expect(error.message).toContain('{"$numberDouble": "Infinity"}');
  });

  it('keeps what a double does hold: its largest and smallest values, zeros, and infinity sent as Extended JSON', () => {
    const record = readBody(
      '{"max": 1.7976931348623157e308, "tiny": 5e-324, "zero": 0e-999, "z": 0.0e5, "inf": {"$numberDouble": "-Infinity"}, "nan": {"$numberDouble": "NaN"}}',
    ) as Record<string, Double>;
    expect(record.max!.value).toBe(Number.MAX_VALUE);
    expect(untyped(record.tiny)).toBe(5e-324);
    expect(record.zero!.value).toBe(0);
    expect(record.z!.value).toBe(0);
    expect(record.inf!.value).toBe(-Infinity);
    expect(record.nan!.value).toBeNaN();
  });
});

describe('numbers-heavy bodies', () => {
  it('reads integers up to 2^53 as numbers, and makes their Longs only when the value goes to the driver', () => {
    const text = '[{"n": 123456789012, "small": 7, "d": 3.0, "f": 2.5, "big": 9007199254740993, "deep": [[-2147483649]]}]';
    const parsed = parsedBody(text) as Record<string, unknown>[];
    // No Long while reading: the body keeps JSON.parse's exact numbers (a Long only beyond 2^53).
    expect(parsed[0]).toEqual({
      n: 123456789012,
      small: 7,
      d: new Double(3),
      f: 2.5,
      big: Long.fromString('9007199254740993'),
      deep: [[-2147483649]],
    });
    const stored = int64Numbers(parsed);
    expect(stored[0]).toEqual({
      n: Long.fromNumber(123456789012),
      small: 7,
      d: new Double(3),
      f: 2.5,
      big: Long.fromString('9007199254740993'),
      deep: [[Long.fromNumber(-2147483649)]],
    });
    // The body itself is left as it was read.
    expect(parsed[0]!.n).toBe(123456789012);
    expect((parsed[0]!.deep as number[][])[0]![0]).toBe(-2147483649);
  });

  it('types a 10 MB array of 12-digit integers as int64 without converting any literal through BigInt', () => {
    const count = 770_000;
    const text = `[${Array.from({ length: count }, (_, i) => 100_000_000_000 + i * 7919).join(',')}]`;
    expect(text.length).toBeGreaterThan(9_900_000);
    const bigInt = vi.spyOn(globalThis, 'BigInt');
    let values: unknown[];
    try {
      values = readBody(text) as unknown[];
      expect(bigInt).not.toHaveBeenCalled();
    } finally {
      bigInt.mockRestore();
    }
    expect(values).toHaveLength(count);
    for (const i of [0, 1, 12_345, count - 1]) {
      expect(values[i]).toBeInstanceOf(Long);
      expect((values[i] as Long).toNumber()).toBe(100_000_000_000 + i * 7919);
    }
  });

  it('makes no Long while reading a 10 MB array of 12-digit integers', () => {
    const count = 770_000;
    const text = `[${Array.from({ length: count }, (_, i) => 100_000_000_000 + i * 7919).join(',')}]`;
    const values = parsedBody(text) as unknown[];
    expect(values.every((value) => typeof value === 'number')).toBe(true);
  });

  it('keeps every digit of int64s beyond 2^53 among thousands of shorter integers', () => {
    const text = `[${Array.from({ length: 5000 }, (_, i) => 10_000_000_000 + i).join(',')}, 9007199254740993, -9223372036854775808, 9223372036854775808]`;
    const values = readBody(text) as unknown[];
    expect((values[4999] as Long).toNumber()).toBe(10_000_000_000 + 4999);
    expect((values[5000] as Long).toString()).toBe('9007199254740993');
    expect((values[5001] as Long).toString()).toBe('-9223372036854775808');
    expect(values[5002]).toEqual(new Double(2 ** 63));
  });
});

/**
 * The reference: what each literal must become, judged the slow, obvious way (the literal read
 * by lossless-json, its value by BigInt and Number).
 */
type Expected = { type: 'int' | 'long' | 'double'; value: string } | { error: 'number_too_long' | 'number_out_of_range' };

function expectedFor(literal: string): Expected {
  if (literal.length > MAX_NUMBER_LITERAL_LENGTH) return { error: 'number_too_long' };
  if (/[.eE]/.test(literal)) {
    const value = Number(literal);
    const mantissa = literal.split(/[eE]/)[0]!;
    if (!Number.isFinite(value) || (value === 0 && /[1-9]/.test(mantissa))) return { error: 'number_out_of_range' };
    return { type: 'double', value: String(value) };
  }
  const value = BigInt(literal);
  if (value >= -(2n ** 31n) && value < 2n ** 31n) return { type: 'int', value: String(Number(value)) };
  if (value >= -(2n ** 63n) && value < 2n ** 63n) return { type: 'long', value: String(value) };
  const double = Number(literal);
  return Number.isFinite(double) ? { type: 'double', value: String(double) } : { error: 'number_out_of_range' };
}

/** The type and value a revived number has, in the reference's terms. */
function actualOf(value: unknown): { type: string; value: string } {
  if (value instanceof Long) return { type: 'long', value: value.toString() };
  return { type: bsonType(value), value: String(untyped(value)) };
}

describe('parseRecordJson against a reference, for random bodies', () => {
  const integerLiteral = fc.oneof(
    fc.integer().map(String),
    fc.bigInt({ min: -(10n ** 25n), max: 10n ** 25n }).map(String),
    fc.bigInt({ min: 2n ** 53n - 3n, max: 2n ** 53n + 3n }).map(String),
    fc.bigInt({ min: 2n ** 63n - 3n, max: 2n ** 63n + 3n }).map((n) => String(-n)),
    fc.integer({ min: 300, max: 420 }).map((n) => '9'.repeat(n)),
  );
  const fractionLiteral = fc.oneof(
    fc.double({ noNaN: true, noDefaultInfinity: true }).map(doubleText),
    fc.tuple(fc.integer({ min: -50, max: 50 }), fc.integer({ min: -400, max: 400 })).map(([m, e]) => `${m}e${e}`),
    fc.tuple(fc.nat(), fc.stringMatching(/^\d{0,30}$/)).map(([i, f]) => `${i}.${f}0`),
    fc.constantFrom('1e999', '-2.0e308', '1e-999', '0e-999', '-0.0', '3.0', '1E3', `0.${'1'.repeat(400)}`),
  );
  const literal = fc.oneof(integerLiteral, fractionLiteral);
  const keyOrText = fc.oneof(fc.string(), fc.stringMatching(/^[\d.eE"\\ -]{0,12}$/));
  const body = fc.array(fc.tuple(keyOrText, literal, keyOrText), { maxLength: 12 }).map((entries) => ({
    entries,
    text: `{"list": [${entries.map(([k, l, t]) => `{${JSON.stringify(k)}: ${l}, "s": ${JSON.stringify(t)}}`).join(', ')}]}`,
  }));

  it('types every literal as the reference does, or refuses the body with the documented error', () => {
    fc.assert(
      fc.property(body, ({ entries, text }) => {
        const expected = entries.map(([, l]) => expectedFor(l));
        const firstError = expected.find((e): e is { error: 'number_too_long' | 'number_out_of_range' } => 'error' in e);
        let parsed: unknown;
        try {
          parsed = readBody(text);
        } catch (error) {
          // A "__proto__" key (fast-check writes one now and then) is refused whatever it holds,
          // unless a literal anywhere in the body is refused first: either refusal is a 400.
          if (entries.some(([key]) => key === '__proto__') && (error as ApiError).code === 'forbidden_key') return;
          // Only the documented refusals, and only when a literal calls for one.
          expect(error).toBeInstanceOf(ApiError);
          expect(firstError, (error as Error).message).toBeDefined();
          expect((error as ApiError).code).toBe(firstError!.error);
          const at = expected.indexOf(firstError!);
          expect(((error as ApiError).detail as { path: string }).path).toBe(`list.${at}.${entries[at]![0]}`);
          return;
        }
        expect(firstError).toBeUndefined();
        const list = (parsed as { list: Record<string, unknown>[] }).list;
        entries.forEach(([key, , t], i) => {
          const e = expected[i] as { type: string; value: string };
          expect(actualOf(list[i]![key === 's' ? 's' : key]), `${entries[i]![1]}`).toEqual(key === 's' ? expect.anything() : e);
          if (key !== 's') expect(list[i]!.s).toBe(t);
        });
      }),
      { numRuns: 1000, ...(process.env.FC_SEED === undefined ? {} : { seed: Number(process.env.FC_SEED) }) },
    );
  });
});

describe('the one walk after JSON.parse and the revival it spares', () => {
  it('still revives wrappers and refuses unsafe keys, NUL keys and deep nesting found anywhere in a body', () => {
    const wrapped = readBody('{"a": [{"d": {"$date": "2020-01-02T00:00:00Z"}}], "t": {"$date": 1700000000000.0}}') as {
      a: { d: unknown }[];
      t: unknown;
    };
    expect(wrapped.a[0]!.d).toEqual(new Date('2020-01-02T00:00:00Z'));
    expect(wrapped.t).toEqual(new Date(1_700_000_000_000));
    const refusal = (text: string): string | undefined => {
      try {
        readBody(text);
        return undefined;
      } catch (error) {
        return (error as ApiError).code;
      }
    };
    expect(refusal('[1.0, {"x": {"__proto__": {"polluted": 2.0}}}]')).toBe('forbidden_key');
    expect(refusal('{"x": 3.0, "y": {"constructor": {"prototype": {"p": 1}}}}')).toBe('forbidden_key');
    expect(refusal('{"x": 3.0, "a\\u0000b": 1}')).toBe('invalid_key');
    expect(refusal(`${'['.repeat(101)}1.0${']'.repeat(101)}`)).toBe('too_deeply_nested');
    expect(refusal('{"x": {"$numberLong": 3.0}}')).toBe('malformed_json');
  });

  it('keeps a string that starts with NUL a string next to whole doubles', () => {
    const record = readBody('{"s": "\\u00003.0", "w": 3.0, "list": ["\\u0000", 4.0]}') as { s: unknown; w: unknown; list: unknown[] };
    expect(record.s).toBe('\u00003.0');
    expect(record.w).toEqual(new Double(3));
    expect(record.list).toEqual(['\u0000', new Double(4)]);
  });
});

describe('parseRecordJson on bodies of megabytes', () => {
  // Past 256 KiB the rewritten text is built in flat pieces, and from 2 MiB the whole doubles of
  // a body share their Doubles: both must type every literal as a small body's do.
  const literal = fc.oneof(
    fc.constantFrom('3.0', '-0.0', '0.0', '0.00', '1.0', '10.000', '2.5', '7', '-2147483649', '1700000000000', '9007199254740993'),
    fc.integer().map(String),
    fc.tuple(fc.integer({ min: -1000, max: 1000 }), fc.nat({ max: 3 })).map(([i, z]) => `${i}.${'0'.repeat(z + 1)}`),
    fc.double({ noNaN: true, noDefaultInfinity: true }).map(doubleText),
  );
  const text = fc.oneof(fc.constantFrom('x', '3.0', ', 4.0]', ': 5.0}', 'a\\"b', 'tab\\t'), fc.string({ maxLength: 8 }));
  const entries = fc.array(fc.tuple(literal, text), { minLength: 1, maxLength: 40 });

  it('types every literal of a body over 2 MiB as the reference does', () => {
    fc.assert(
      fc.property(entries, fc.constantFrom('', ' ', '\n  '), (pieces, space) => {
        const records: string[] = [];
        let length = 0;
        for (let i = 0; length < 2.2 * 1024 * 1024; i += 1) {
          const [l, t] = pieces[i % pieces.length]!;
          const record = `{"i":${space}${i},${space}"v":${space}${l},${space}"s":${space}${JSON.stringify(t)}}`;
          records.push(record);
          length += record.length + 1;
        }
        const expected = pieces.map(([l]) => expectedFor(l) as { type: string; value: string });
        const parsed = readBody(`[${records.join(`,${space}`)}]`) as { i: number; v: unknown; s: string }[];
        expect(parsed).toHaveLength(records.length);
        const wrong = parsed.findIndex((record, i) => {
          const [l, t] = pieces[i % pieces.length]!;
          const actual = actualOf(record.v);
          const want = expected[i % pieces.length]!;
          return (
            record.i !== i ||
            record.s !== t ||
            actual.type !== want.type ||
            actual.value !== want.value ||
            // The reference writes -0 as "0": its sign is the literal's.
            Object.is(untyped(record.v), -0) !== (Number(l) === 0 && l.startsWith('-'))
          );
        });
        expect(wrong, wrong < 0 ? '' : `record ${wrong}: ${records[wrong]}`).toBe(-1);
      }),
      { numRuns: 8, ...(process.env.FC_SEED === undefined ? {} : { seed: Number(process.env.FC_SEED) }) },
    );
  });
});
