import fc from 'fast-check';
import { BSON, BSONRegExp, Binary, Code, Decimal128, Double, Long, ObjectId, Timestamp } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { MAX_NESTING_DEPTH, parseJsonBody, parseJsonParam } from '../../../src/documents/extended-json.js';
import { storableRecordFromJson } from '../../../src/documents/record-rules.js';
import { apiError } from './api-error.js';

const HEX = '5f43a1b2c3d4e5f601234567';

describe('parseJsonParam', () => {
  it('parses plain JSON unchanged', () => {
    expect(parseJsonParam('{"a": 1, "b": [true, null, "x"], "c": {"d": 2.5}}', 'query')).toEqual({
      a: 1,
      b: [true, null, 'x'],
      c: { d: 2.5 },
    });
    expect(parseJsonParam('[1, 2]', 'aggregate')).toEqual([1, 2]);
    expect(parseJsonParam('"text"', 'query')).toBe('text');
  });

  it('turns {"$oid": ...} into an ObjectId', () => {
    const value = parseJsonParam(`{"_id": {"$oid": "${HEX}"}}`, 'query') as { _id: unknown };
    expect(value._id).toBeInstanceOf(ObjectId);
    expect((value._id as ObjectId).toHexString()).toBe(HEX);
  });

  it('turns {"$date": ...} into a Date, in ISO, millisecond and canonical forms', () => {
    const value = parseJsonParam(
      '{"iso": {"$date": "2020-01-02T03:04:05Z"}, "ms": {"$date": 86400000}, "canonical": {"$date": {"$numberLong": "1000"}}}',
      'query',
    ) as Record<string, Date>;
    expect(value.iso).toBeInstanceOf(Date);
    expect(value.iso!.getTime()).toBe(Date.UTC(2020, 0, 2, 3, 4, 5));
    expect(value.ms!.getTime()).toBe(86_400_000);
    expect(value.canonical!.getTime()).toBe(1000);
  });

  it('revives wrappers inside operators and arrays', () => {
    const value = parseJsonParam(
      `{"created": {"$gte": {"$date": "2021-06-01T00:00:00Z"}}, "_id": {"$in": [{"$oid": "${HEX}"}, "plain"]}}`,
      'query',
    ) as { created: { $gte: unknown }; _id: { $in: unknown[] } };
    expect(value.created.$gte).toEqual(new Date('2021-06-01T00:00:00Z'));
    expect(value._id.$in[0]).toBeInstanceOf(ObjectId);
    expect(value._id.$in[1]).toBe('plain');
  });

  it('handles the numeric wrappers (relaxed: numbers where exact, Long beyond 2^53)', () => {
    const value = parseJsonParam(
      '{"l": {"$numberLong": "42"}, "i": {"$numberInt": "-7"}, "d": {"$numberDouble": "1.5"}, "big": {"$numberLong": "9007199254740993"}, "dec": {"$numberDecimal": "0.1"}}',
      'query',
    ) as Record<string, unknown>;
    expect(value.l).toBe(42);
    expect(value.i).toBe(-7);
    expect(value.d).toBe(1.5);
    expect(value.big).toBeInstanceOf(Long);
    expect((value.big as Long).toString()).toBe('9007199254740993');
    expect(value.dec).toBeInstanceOf(Decimal128);
  });

  it('revives the other BSON types', () => {
    const value = parseJsonParam(
      '{"bin": {"$binary": {"base64": "AQID", "subType": "00"}}, "ts": {"$timestamp": {"t": 5, "i": 1}}, "re": {"$regularExpression": {"pattern": "^a", "options": "i"}}}',
      'query',
    ) as Record<string, unknown>;
    expect(value.bin).toBeInstanceOf(Binary);
    expect(value.ts).toBeInstanceOf(Timestamp);
    expect(value.re).toBeInstanceOf(BSONRegExp);
  });

  it('keeps $regex next to other operators as query operators instead of dropping them', () => {
    const value = parseJsonParam('{"name": {"$regex": "^ab", "$options": "i", "$ne": "abc"}}', 'query');
    expect(value).toEqual({ name: { $regex: '^ab', $options: 'i', $ne: 'abc' } });
  });

  it('turns a lone {"$regex", "$options"} into a regular expression', () => {
    const value = parseJsonParam('{"name": {"$regex": "^ab", "$options": "i"}}', 'query') as { name: BSONRegExp };
    expect(value.name).toBeInstanceOf(BSONRegExp);
    expect(value.name.pattern).toBe('^ab');
    expect(value.name.options).toBe('i');
  });

  it.each([
    ['trailing comma', '{"a": 1,}'],
    ['single quotes', "{'a': 1}"],
    ['unquoted key', '{a: 1}'],
    ['truncated', '{"filter": {'],
    ['bare word', 'hello'],
    ['two values', '{} {}'],
  ])('refuses malformed JSON (%s) with 400 malformed_json naming the parameter', (_what, raw) => {
    const err = apiError(() => parseJsonParam(raw, 'query'));
    expect(err.status).toBe(400);
    expect(err.code).toBe('malformed_json');
    expect(err.message.startsWith('The "query" parameter is not valid JSON: ')).toBe(true);
    expect(err.message.length).toBeGreaterThan('The "query" parameter is not valid JSON: '.length);
  });

  it('names the parameter it was given', () => {
    expect(apiError(() => parseJsonParam('[', 'aggregate')).message).toContain('"aggregate" parameter');
  });

  it.each([
    ['bad $oid', '{"_id": {"$oid": "xyz"}}'],
    ['unparseable $date', '{"d": {"$date": "not a date"}}'],
    ['$date of the wrong type', '{"d": {"$date": true}}'],
    ['non-numeric $numberInt', '{"n": {"$numberInt": "abc"}}'],
    ['fractional $numberInt', '{"n": {"$numberInt": "1.5"}}'],
    ['out-of-range $numberInt', '{"n": {"$numberInt": "2147483648"}}'],
    ['non-numeric $numberDouble', '{"n": {"$numberDouble": "abc"}}'],
    ['bad $numberLong', '{"n": {"$numberLong": "12x"}}'],
    ['bad $numberDecimal', '{"n": {"$numberDecimal": "ten"}}'],
    ['unsupported regex option', '{"r": {"$regex": "a", "$options": "q"}}'],
    ['$oid with a stray key', `{"_id": {"$oid": "${HEX}", "extra": 1}}`],
    ['$date with an operator beside it', '{"d": {"$date": "2020-01-01T00:00:00Z", "$gt": 1}}'],
  ])('refuses invalid Extended JSON (%s) with 400 malformed_json', (_what, raw) => {
    const err = apiError(() => parseJsonParam(raw, 'query'));
    expect(err.status).toBe(400);
    expect(err.code).toBe('malformed_json');
    expect(err.message).toContain('"query" parameter');
  });

  const WRONG_OPERANDS: Record<string, unknown[]> = {
    $oid: [5, {}, []],
    $date: [true, [], { x: 1 }, { $numberLong: 5 }],
    $numberInt: [5, {}],
    $numberLong: [5, {}, true],
    $numberDouble: [1.5, []],
    $numberDecimal: [5, {}],
    $uuid: [5, {}],
    $timestamp: [5, 'x', { t: 'x', i: 1 }, { t: 1 }],
    $regularExpression: [5, 'a', { pattern: 5, options: '' }, { pattern: 'a' }],
    $symbol: [5, {}, [], true],
    $code: [5, {}, true],
    $dbPointer: [5, 'c', { $ref: 5, $id: { $oid: HEX } }],
    $minKey: ['x', {}, 0],
    $maxKey: ['x', [], 2],
    $undefined: [5, 'x', false],
  };

  it.each(Object.entries(WRONG_OPERANDS))('refuses a %s wrapper holding the wrong type with 400 malformed_json', (wrapper, operands) => {
    for (const operand of operands) {
      const err = apiError(() => parseJsonBody({ a: [{ b: { [wrapper]: operand } }] }));
      expect(err.status, JSON.stringify(operand)).toBe(400);
      expect(err.code).toBe('malformed_json');
      expect(err.message).toContain(`"${wrapper}"`);
      expect(err.detail).toEqual({ path: 'a.0.b' });
    }
  });

  it('refuses the other wrappers holding the wrong type, with their companion keys', () => {
    for (const wrapper of [
      { $binary: 5 },
      { $binary: { base64: 5, subType: '00' } },
      { $binary: 'AQID', $type: 5 },
      { $regex: 5 },
      { $regex: 'a', $options: 5 },
      { $code: 'x', $scope: 5 },
      { $code: 5, $scope: {} },
      // Wrappers nested in a wrapper are checked too: bson would build a Symbol of 5 there.
      { $code: 'x', $scope: { s: { $symbol: 5 } } },
      { $dbPointer: { $ref: 'c', $id: { $symbol: 5 } } },
      { $dbPointer: { $ref: 'c', $id: { $oid: HEX, x: 1 } } },
    ]) {
      const err = apiError(() => parseJsonBody({ v: wrapper }));
      expect(err.code, JSON.stringify(wrapper)).toBe('malformed_json');
    }
  });

  it('revives the scope of a $code as a document of its own', () => {
    const value = parseJsonBody({ c: { $code: 'f()', $scope: { at: { $date: '2020-01-01T00:00:00Z' } } } }) as { c: Code };
    expect(value.c).toBeInstanceOf(Code);
    expect(value.c.code).toBe('f()');
    expect(value.c.scope).toEqual({ at: new Date('2020-01-01T00:00:00Z') });
  });

  it('names the wrapper, the place and the stray keys', () => {
    const err = apiError(() => parseJsonParam(`{"a": {"b": {"$oid": "${HEX}", "x": 1, "y": 2}}}`, 'query'));
    expect(err.message).toContain('"$oid"');
    expect(err.message).toContain('a.b');
    expect(err.message).toContain('"x", "y"');
  });

  it('accepts the special doubles', () => {
    const value = parseJsonParam('{"a": {"$numberDouble": "NaN"}, "b": {"$numberDouble": "-Infinity"}}', 'query') as Record<string, number>;
    expect(Number.isNaN(value.a)).toBe(true);
    expect(value.b).toBe(Number.NEGATIVE_INFINITY);
  });

  it.each([
    ['at the top', '{"__proto__": {"isAdmin": true}}'],
    ['nested', '{"filter": {"a": {"__proto__": {"polluted": 1}}}}'],
    ['inside an array', '[{"$match": {"__proto__": 1}}]'],
  ])('refuses a "__proto__" key (%s)', (_where, raw) => {
    const err = apiError(() => parseJsonParam(raw, 'query'));
    expect(err.status).toBe(400);
    expect(err.code).toBe('forbidden_key');
    expect(err.message).toContain('__proto__');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(({} as Record<string, unknown>).isAdmin).toBeUndefined();
  });

  it('refuses constructor.prototype but allows a plain "constructor" field', () => {
    const err = apiError(() => parseJsonParam('{"constructor": {"prototype": {"x": 1}}}', 'query'));
    expect(err.code).toBe('forbidden_key');
    expect(err.message).toContain('constructor.prototype');
    expect(parseJsonParam('{"constructor": "Alice", "prototype": 2}', 'query')).toEqual({ constructor: 'Alice', prototype: 2 });
  });

  it('refuses keys containing NUL', () => {
    const err = apiError(() => parseJsonParam('{"a\\u0000b": 1}', 'query'));
    expect(err.code).toBe('invalid_key');
  });

  it(`accepts ${MAX_NESTING_DEPTH} levels of nesting and refuses one more`, () => {
    const nested = (levels: number) => `${'{"a":'.repeat(levels - 1)}{}${'}'.repeat(levels - 1)}`;
    expect(() => parseJsonParam(nested(MAX_NESTING_DEPTH), 'query')).not.toThrow();
    const err = apiError(() => parseJsonParam(nested(MAX_NESTING_DEPTH + 1), 'query'));
    expect(err.code).toBe('too_deeply_nested');
    expect(err.message).toContain('"query" parameter');
  });

  it('refuses hostile nesting with a 400, not a stack overflow', () => {
    const raw = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    expect(apiError(() => parseJsonParam(raw, 'aggregate')).code).toBe('too_deeply_nested');
  });
});

describe('parseJsonBody', () => {
  it('revives Extended JSON in an already parsed body', () => {
    const body = JSON.parse(`{"_id": {"$oid": "${HEX}"}, "when": {"$date": "2022-02-02T00:00:00Z"}, "n": 3, "tags": ["a"]}`);
    const value = parseJsonBody(body) as Record<string, unknown>;
    expect(value._id).toBeInstanceOf(ObjectId);
    expect((value._id as ObjectId).toHexString()).toBe(HEX);
    expect(value.when).toEqual(new Date('2022-02-02T00:00:00Z'));
    expect(value.n).toBe(3);
    expect(value.tags).toEqual(['a']);
  });

  it('handles arrays of documents (bulk insert) and scalars', () => {
    const value = parseJsonBody(JSON.parse(`[{"_id": {"$oid": "${HEX}"}}, {"x": 1}]`)) as Record<string, unknown>[];
    expect(value[0]!._id).toBeInstanceOf(ObjectId);
    expect(value[1]).toEqual({ x: 1 });
    expect(parseJsonBody(5)).toBe(5);
    expect(parseJsonBody(null)).toBe(null);
  });

  it('refuses "__proto__" keys that JSON.parse created as own properties', () => {
    const body = JSON.parse('{"ok": 1, "__proto__": {"polluted": true}}');
    const err = apiError(() => parseJsonBody(body));
    expect(err.status).toBe(400);
    expect(err.code).toBe('forbidden_key');
    expect(err.message).toContain('request body');
  });

  it('reports Extended JSON errors as being in the request body', () => {
    const err = apiError(() => parseJsonBody({ _id: { $oid: 'nope' } }));
    expect(err.code).toBe('malformed_json');
    expect(err.message).toContain('request body');
  });

  it('does not modify its input', () => {
    const body = { _id: { $oid: HEX } };
    parseJsonBody(body);
    expect(body).toEqual({ _id: { $oid: HEX } });
  });

  it.each([
    [
      'a "__proto__" key inside an array',
      JSON.parse('[{"$match": {"__proto__": 1}}]'),
      'forbidden_key',
      '0.$match.__proto__',
      ' (at 0.$match)',
    ],
    ['"constructor.prototype" at the top', { constructor: { prototype: {} } }, 'forbidden_key', 'constructor.prototype', 'body.'],
    ['a NUL key in the second record', [{ a: 1 }, { b: { 'c\u0000': 1 } }], 'invalid_key', '1.b.c\u0000', 'NUL'],
    ['a bad $oid in the second record', [{ x: 1 }, { _id: { $oid: 'nope' } }], 'malformed_json', '1._id', ' (at 1._id)'],
    ['a bad $date deep in a record', [{ a: [{ d: { $date: 'never' } }] }], 'malformed_json', '0.a.0.d', ' (at 0.a.0.d)'],
    ['a wrapper with a stray key', { a: { b: { $oid: HEX, x: 1 } } }, 'malformed_json', 'a.b', ' (at a.b)'],
  ])('names the place of %s, in the message and the detail', (_what, body, code, path, inMessage) => {
    const err = apiError(() => parseJsonBody(body));
    expect(err.code).toBe(code);
    expect((err.detail as { path: string }).path).toBe(path);
    expect(err.message).toContain(inMessage);
  });

  it('reads $oid and $date exactly as bson reads Extended JSON, valid or not', () => {
    const outcome = (read: () => unknown): unknown => {
      try {
        const value = read();
        return value instanceof Date ? value.getTime() : value instanceof ObjectId ? value.toHexString() : value;
      } catch {
        return 'refused';
      }
    };
    const dateText = fc.oneof(
      fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
      fc.date({ noInvalidDate: true }).map((d) => d.toString()),
      fc.string(),
    );
    const oidText = fc.oneof(fc.stringMatching(/^[0-9a-fA-F]{24}$/), fc.string());
    fc.assert(
      fc.property(
        fc.oneof(
          dateText.map((t) => ({ $date: t })),
          oidText.map((t) => ({ $oid: t })),
        ),
        (wrapper) => {
          const ours = outcome(() => (parseJsonBody({ v: wrapper }) as { v: unknown }).v);
          const theirs = outcome(() => {
            const value = BSON.EJSON.deserialize(wrapper, { relaxed: true });
            if (value instanceof Date && Number.isNaN(value.getTime())) throw new Error('invalid date');
            return value;
          });
          expect(ours).toEqual(theirs);
        },
      ),
    );
  });

  it('returns JSON without wrappers equal to its input, and leaves the input as it was', () => {
    const plain = fc.jsonValue().filter((value) => !JSON.stringify(value).includes('"$') && !JSON.stringify(value).includes('__proto__'));
    fc.assert(
      fc.property(plain, (value) => {
        const before = structuredClone(value);
        expect(parseJsonBody(value)).toEqual(before);
        expect(value).toEqual(before);
      }),
    );
  });

  it('copies only what it revives: a record with a wrapper is a new object, its plain members are not copied', () => {
    const body = [{ _id: { $oid: HEX }, nested: { a: [1, 2] } }, { plain: { b: 1 } }];
    const value = parseJsonBody(body) as Array<Record<string, unknown>>;
    expect(value).not.toBe(body);
    expect(value[0]).not.toBe(body[0]);
    expect(value[0]!.nested).toBe(body[0]!.nested);
    expect(value[1]).toBe(body[1]);
    expect(body[0]!._id).toEqual({ $oid: HEX });
  });
});

describe('numeric wrappers in records and in URL parameters', () => {
  const WRAPPERS = '{"d": {"$numberDouble": "3"}, "z": {"$numberDouble": "-0.0"}, "l": {"$numberLong": "42"}, "i": {"$numberInt": "7"}}';

  it('are the BSON type they name in a record: a Double and a Long even where a number would be exact', () => {
    const value = parseJsonBody(JSON.parse(WRAPPERS)) as Record<string, unknown>;
    expect(value.d).toEqual(new Double(3));
    expect(Object.is((value.z as Double).value, -0)).toBe(true);
    expect(value.l).toEqual(Long.fromNumber(42));
    expect(value.i).toBe(7);
  });

  it("are the BSON type they name in a task's record too", () => {
    const record = storableRecordFromJson({ d: { $numberDouble: '3.0' }, n: 3 });
    expect(record.d).toBeInstanceOf(Double);
    expect(record.n).toBe(3);
  });

  it('are JavaScript numbers in a URL parameter (filters compare numbers by value)', () => {
    const value = parseJsonParam(WRAPPERS, 'query') as Record<string, unknown>;
    expect(value).toEqual({ d: 3, z: -0, l: 42, i: 7 });
  });
});
