import fc from 'fast-check';
import { BSON, Binary, Decimal128, Long, ObjectId, Timestamp, UUID, type BSONSerializeOptions } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { recordReader } from '../../../src/documents/raw-records.js';
import { bsonToJson, type BsonJsonOptions } from '../../../src/render/bson-json.js';
import { BsonRecord } from '../../../src/render/bson-record.js';
import { FORMATS, renderEnvelopeStream, type RenderContext } from '../../../src/render/index.js';
import { plainJson } from '../../../src/render/plain-json.js';
import { toPlainValue } from '../../../src/render/plain-value.js';
import { FakeSink, fromArray, pageContext } from './support.js';

/**
 * The JSON written from BSON bytes must be exactly what decoding and rendering write, for every
 * type and decoder setting; where it cannot be, it must say so (undefined) rather than differ.
 * Documents are built byte by byte (below), so keys and strings can be anything the wire can
 * carry: invalid UTF-8, duplicate keys, `$` and array-index keys.
 */

type Node =
  | { t: 'double'; v: number }
  | { t: 'string'; bytes: Uint8Array }
  | { t: 'doc'; entries: [Uint8Array, Node][] }
  | { t: 'array'; items: Node[] }
  | { t: 'binary'; subtype: number; bytes: Uint8Array }
  | { t: 'oid'; bytes: Uint8Array }
  | { t: 'bool'; byte: number }
  | { t: 'date' | 'int64' | 'timestamp'; low: number; high: number }
  | { t: 'null' | 'undefined' | 'minkey' | 'maxkey' }
  | { t: 'int32'; v: number }
  | { t: 'decimal'; bytes: Uint8Array }
  | { t: 'regex'; pattern: Uint8Array; flags: Uint8Array }
  | { t: 'code' | 'symbol'; bytes: Uint8Array };

const TYPE_BYTES: Record<Node['t'], number> = {
  double: 0x01,
  string: 0x02,
  doc: 0x03,
  array: 0x04,
  binary: 0x05,
  undefined: 0x06,
  oid: 0x07,
  bool: 0x08,
  date: 0x09,
  null: 0x0a,
  regex: 0x0b,
  code: 0x0d,
  symbol: 0x0e,
  int32: 0x10,
  timestamp: 0x11,
  int64: 0x12,
  decimal: 0x13,
  minkey: 0xff,
  maxkey: 0x7f,
};

const int32Bytes = (n: number): Buffer => {
  const out = Buffer.alloc(4);
  out.writeInt32LE(n);
  return out;
};
const cstring = (bytes: Uint8Array): Buffer => Buffer.concat([bytes, Buffer.of(0)]);
const lengthPrefixed = (bytes: Uint8Array): Buffer => Buffer.concat([int32Bytes(bytes.length + 1), bytes, Buffer.of(0)]);

function encodeValue(node: Node): Buffer {
  switch (node.t) {
    case 'double': {
      const out = Buffer.alloc(8);
      out.writeDoubleLE(node.v);
      return out;
    }
    case 'string':
    case 'code':
    case 'symbol':
      return lengthPrefixed(node.bytes);
    case 'doc':
      return encodeDocument(node.entries);
    case 'array':
      return encodeDocument(node.items.map((item, index) => [Buffer.from(String(index)), item]));
    case 'binary':
      return Buffer.concat([int32Bytes(node.bytes.length), Buffer.of(node.subtype), node.bytes]);
    case 'oid':
    case 'decimal':
      return Buffer.from(node.bytes);
    case 'bool':
      return Buffer.of(node.byte);
    case 'date':
    case 'int64':
    case 'timestamp':
      return Buffer.concat([int32Bytes(node.low), int32Bytes(node.high)]);
    case 'int32':
      return int32Bytes(node.v);
    case 'regex':
      return Buffer.concat([cstring(node.pattern), cstring(node.flags)]);
    case 'null':
    case 'undefined':
    case 'minkey':
    case 'maxkey':
      return Buffer.alloc(0);
  }
}

function encodeDocument(entries: [Uint8Array, Node][]): Buffer {
  const body = Buffer.concat(entries.flatMap(([key, node]) => [Buffer.of(TYPE_BYTES[node.t]), cstring(key), encodeValue(node)]));
  return Buffer.concat([int32Bytes(body.length + 5), body, Buffer.of(0)]);
}

const utf8 = (text: string): Uint8Array => Buffer.from(text, 'utf8');
const noNul = (bytes: Uint8Array): Uint8Array => bytes.filter((byte) => byte !== 0);

/** Text of any UTF-16 code units, lone surrogates included (they encode as U+FFFD). */
const anyUnits = fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code)) });
const tricky = fc.constantFrom(
  '',
  'plain',
  'say "hi"',
  'back\\slash',
  'tab\tnew\nline\u0001',
  '\u2028\u2029',
  '\ud800',
  'a\udc00b',
  'é€😀',
  '\u007f',
  '\ufffd',
);
/**
 * Long text, mostly plain, with a few bytes anywhere that need escaping or are not ASCII: long
 * strings are scanned a word at a time, and the offsets of those words vary with what precedes.
 */
const longText = fc
  .tuple(
    fc.integer({ min: 28, max: 300 }),
    fc.array(fc.tuple(fc.nat(), fc.constantFrom(0x01, 0x1f, 0x20, 0x21, 0x22, 0x23, 0x5b, 0x5c, 0x5d, 0x7e, 0x7f, 0x80, 0xc3, 0xff)), {
      maxLength: 3,
    }),
  )
  .map(([length, specials]) => {
    const bytes = Buffer.alloc(length, 'abcdefghij');
    for (const [at, byte] of specials) bytes[at % length] = byte;
    return new Uint8Array(bytes);
  });
const textBytes = fc.oneof(
  tricky.map(utf8),
  anyUnits.map(utf8),
  fc.string({ unit: 'binary' }).map(utf8),
  fc.uint8Array({ maxLength: 40 }),
  longText,
);

const keyBytes = fc
  .oneof(
    fc.constantFrom(
      'a',
      'b',
      '_id',
      'x"y',
      'k\\',
      '\u2028',
      'é',
      '__proto__',
      'constructor',
      '$ref',
      '$id',
      '$db',
      '$x',
      '0',
      '7',
      '01',
      '4294967294',
      '4294967295',
      '-1',
      '1.5',
      '',
    ),
    fc.string({ maxLength: 8 }),
    anyUnits,
  )
  .map(utf8)
  .map(noNul);
const invalidKeyBytes = fc.uint8Array({ minLength: 1, maxLength: 6 }).map(noNul);

const int64Words = fc
  .oneof(
    fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
    fc.constantFrom(
      0n,
      1n,
      -1n,
      2n ** 53n,
      -(2n ** 53n),
      2n ** 53n - 1n,
      -(2n ** 53n) + 1n,
      2n ** 53n + 1n,
      -(2n ** 53n) - 1n,
      2n ** 63n - 1n,
      -(2n ** 63n),
    ),
    fc.integer({ min: -8.64e15 - 10, max: 8.64e15 + 10 }).map(BigInt),
  )
  .map((value) => ({ low: Number(BigInt.asIntN(32, value)), high: Number(BigInt.asIntN(32, value >> 32n)) }));

const leaf: fc.Arbitrary<Node> = fc.oneof(
  fc.oneof(fc.double(), fc.constantFrom(0, -0, NaN, Infinity, -Infinity, 1e21, 5e-324, 0.1)).map((v) => ({ t: 'double' as const, v })),
  textBytes.map((bytes) => ({ t: 'string' as const, bytes })),
  fc
    .record({
      subtype: fc.constantFrom(0, 1, 2, 3, 4, 5, 0x80),
      bytes: fc.oneof(fc.uint8Array({ maxLength: 20 }), fc.uint8Array({ minLength: 16, maxLength: 16 })),
    })
    .map((b) => ({ t: 'binary' as const, ...b })),
  fc.uint8Array({ minLength: 12, maxLength: 12 }).map((bytes) => ({ t: 'oid' as const, bytes })),
  fc.constantFrom(0, 1, 1, 0, 2).map((byte) => ({ t: 'bool' as const, byte })),
  int64Words.map((words) => ({ t: 'date' as const, ...words })),
  int64Words.map((words) => ({ t: 'int64' as const, ...words })),
  int64Words.map((words) => ({ t: 'timestamp' as const, ...words })),
  fc.integer().map((v) => ({ t: 'int32' as const, v })),
  fc.constantFrom('null', 'undefined', 'minkey', 'maxkey').map((t) => ({ t })),
  fc.uint8Array({ minLength: 16, maxLength: 16 }).map((bytes) => ({ t: 'decimal' as const, bytes })),
  fc
    .record({ pattern: textBytes.map(noNul), flags: fc.constantFrom('', 'i', 'ms', 'x', 'u').map(utf8) })
    .map((r) => ({ t: 'regex' as const, ...r })),
  fc.record({ t: fc.constantFrom('code' as const, 'symbol' as const), bytes: textBytes }),
);

const { node } = fc.letrec<{ node: Node; doc: Node; array: Node }>((tie) => ({
  node: fc.oneof({ depthSize: 'small', withCrossShrink: true }, leaf, leaf, tie('doc'), tie('array')),
  doc: fc
    .array(fc.tuple(fc.oneof(keyBytes, keyBytes, invalidKeyBytes), tie('node')), { maxLength: 6 })
    .map((entries) => ({ t: 'doc' as const, entries })),
  array: fc.array(tie('node'), { maxLength: 5 }).map((items) => ({ t: 'array' as const, items })),
}));
const topLevel = fc.array(fc.tuple(fc.oneof(keyBytes, keyBytes, invalidKeyBytes), node), { maxLength: 8 }).map(encodeDocument);

const bsonSettings: fc.Arbitrary<BSONSerializeOptions> = fc.record(
  {
    promoteLongs: fc.boolean(),
    promoteValues: fc.boolean(),
    promoteBuffers: fc.boolean(),
    useBigInt64: fc.boolean(),
    bsonRegExp: fc.boolean(),
    enableUtf8Validation: fc.boolean(),
  },
  { requiredKeys: [] },
);

/** What the record renders as through the decoder (or the error it raises), and the shortcut's answer. */
function bothWays(bytes: Uint8Array, settings: BSONSerializeOptions): { expected: string | Error; fast: string | undefined } {
  const reader = recordReader(settings);
  let expected: string | Error;
  try {
    expected = plainJson(toPlainValue(new BsonRecord(bytes, reader)));
  } catch (error) {
    expected = error as Error;
  }
  return { expected, fast: new BsonRecord(bytes, reader).json() };
}

/** True when the shortcut rendered the record (then as the decoder path does). */
function expectSame(bytes: Uint8Array, settings: BSONSerializeOptions = {}): boolean {
  const { expected, fast } = bothWays(bytes, settings);
  if (expected instanceof Error) expect(fast).toBeUndefined();
  else if (fast !== undefined) expect(fast).toBe(expected);
  return fast !== undefined;
}

/** The driver's default decoding, numbers promoted (doubles not told from integers). */
const DEFAULTS: BsonJsonOptions = { longsAsNumbers: true, buffersAsBytes: false, validateUtf8: true, typedDoubles: false };

describe('JSON from BSON bytes', () => {
  it('is the decoder path text for any document and decoder settings, or declines', () => {
    let rendered = 0;
    fc.assert(
      fc.property(topLevel, bsonSettings, (bytes, settings) => {
        if (expectSame(bytes, settings)) rendered += 1;
      }),
      { numRuns: 1500 },
    );
    // Declining everything would pass the comparison: a good share must be rendered here.
    expect(rendered).toBeGreaterThan(150);
  });

  it('renders every type it covers itself (no fallback for ordinary records)', () => {
    const covered = fc.array(
      fc.tuple(
        fc.string({ minLength: 1, maxLength: 6 }).filter((key) => !/^[$\d]/.test(key) && !key.includes('\0')),
        fc.oneof(
          fc.double(),
          fc.string({ unit: 'binary' }),
          fc.integer(),
          fc.boolean(),
          fc.date({ noInvalidDate: true }),
          fc.constant(null),
          fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map((value) => Long.fromBigInt(value)),
          fc.uint8Array({ minLength: 12, maxLength: 12 }).map((bytes) => new ObjectId(bytes)),
          fc.uint8Array({ maxLength: 20 }).map((bytes) => new Binary(bytes)),
          fc.uuid().map((text) => new UUID(text)),
          fc.record({ t: fc.nat(), i: fc.nat() }).map((words) => new Timestamp(words)),
          fc.array(fc.integer(), { maxLength: 3 }),
          fc.dictionary(fc.constantFrom('p', 'q', 'r'), fc.string(), { maxKeys: 3 }),
        ),
      ),
      { maxLength: 8 },
    );
    fc.assert(
      fc.property(covered, (entries) => {
        const keys = new Set(entries.map(([key]) => key));
        fc.pre(keys.size === entries.length);
        const bytes = BSON.serialize(Object.fromEntries(entries));
        const fast = bsonToJson(bytes, DEFAULTS);
        expect(fast).toBe(JSON.stringify(toPlainValue(BSON.deserialize(bytes))));
      }),
      { numRuns: 1000 },
    );
  });

  it('renders long text with characters to escape anywhere in it, wherever the text starts', () => {
    // Long strings are scanned four bytes at a time from an aligned address: the key before the
    // text moves where it starts, and the characters are put at every distance from a word edge.
    const special = fc.constantFrom('\u0001', '\u001f', '"', '\\', '\u007f', 'é', '€', '😀', '\u2028');
    const text = fc
      .tuple(fc.integer({ min: 28, max: 200 }), fc.array(fc.tuple(fc.nat(), special), { maxLength: 3 }))
      .map(([length, inserts]) => {
        const chars = [...'abcdefghij'.repeat(Math.ceil(length / 10)).slice(0, length)];
        for (const [at, char] of inserts) chars[at % length] = char;
        return chars.join('');
      });
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('k', 'l'), minLength: 1, maxLength: 7 }), text, (key, value) => {
        const bytes = BSON.serialize({ [key]: value, [`${key}2`]: [value] });
        expect(bsonToJson(bytes, DEFAULTS)).toBe(JSON.stringify(toPlainValue(BSON.deserialize(bytes))));
      }),
      { numRuns: 1000 },
    );
  });

  it('tells duplicate keys apart from similar ones, in small and large objects', () => {
    const keys = (count: number): string[] => Array.from({ length: count }, (_, i) => `key${i}`);
    const document = (names: string[]): Buffer => {
      const body = Buffer.concat(names.map((name, i) => Buffer.concat([Buffer.of(0x10), Buffer.from(`${name}\0`), int32Bytes(i)])));
      return Buffer.concat([int32Bytes(body.length + 5), body, Buffer.of(0)]);
    };
    for (const count of [2, 16, 17, 40]) {
      const distinct = keys(count);
      expect(bsonToJson(document(distinct), DEFAULTS)).toBe(JSON.stringify(Object.fromEntries(distinct.map((k, i) => [k, i]))));
      // The same name twice: the decoder keeps the last value at the first place, so the shortcut declines.
      expect(bsonToJson(document([...distinct, distinct[1]!]), DEFAULTS)).toBeUndefined();
      // A name that differs from an earlier one only in its last byte, or only in length, is not a duplicate.
      expect(bsonToJson(document([...distinct, 'key1x', 'key']), DEFAULTS)).toBeDefined();
    }
    // Plain keys, then a non-ASCII one equal to none of them, then a repeat of a plain one.
    expect(bsonToJson(document(['a', 'b', 'é', 'b']), DEFAULTS)).toBeUndefined();
    expect(bsonToJson(document(['a', 'b', 'é', 'c']), DEFAULTS)).toBe('{"a":0,"b":1,"é":2,"c":3}');
  });

  it('writes a typical record exactly as the decoder path does', () => {
    const record = {
      _id: new ObjectId('65a1b2c3d4e5f60718293a4b'),
      n: 7,
      big: Long.fromString('9007199254740993'),
      edge: Long.fromString('9007199254740992'),
      value: -0,
      ratio: 0.1,
      when: new Date(Date.UTC(2024, 1, 29, 12, 0, 0, 5)),
      far: new Date(8.64e15),
      id: new UUID('0f1e2d3c-4b5a-4697-8877-665544332211'),
      blob: new Binary(Buffer.from('bytes')),
      ts: new Timestamp({ t: 1700000000, i: 3 }),
      text: 'quote " backslash \\ tab \t line \u2028 emoji 😀',
      nested: { list: [1, 'two', null, { deep: true }], empty: {}, none: [] },
    };
    const bytes = BSON.serialize(record);
    const expected = JSON.stringify(toPlainValue(BSON.deserialize(bytes)));
    expect(bsonToJson(bytes, DEFAULTS)).toBe(expected);
    expect(expected).toContain('"edge":9007199254740992');
    expect(expected).toContain('"big":"9007199254740993"');
    // Without promoted longs, 2^53 is a Long, and text (it is not a safe integer).
    const asLongs = BSON.deserialize(bytes, { promoteLongs: false });
    expect(bsonToJson(bytes, { ...DEFAULTS, longsAsNumbers: false })).toBe(JSON.stringify(toPlainValue(asLongs)));
    expect(JSON.stringify(toPlainValue(asLongs))).toContain('"edge":"9007199254740992"');
  });

  it('leaves to the decoder what only it can render: duplicates, index keys, $ keys, Decimal128, regex, invalid UTF-8', () => {
    const duplicate = Buffer.from(BSON.serialize({ a: 1, b: 2 }));
    duplicate[duplicate.indexOf('b\0', 4, 'latin1')] = 0x61; // the second key becomes "a" too
    const invalid = Buffer.from(BSON.serialize({ s: 'xx' }));
    invalid.fill(0xff, invalid.indexOf('xx', 4, 'latin1'), invalid.indexOf('xx', 4, 'latin1') + 2);
    const declined = [
      duplicate,
      BSON.serialize({ b: 1, 2: 'two' }),
      BSON.serialize({ x: { $ref: 'col', $id: 1 } }),
      BSON.serialize({ d: Decimal128.fromString('1.10') }),
      BSON.serialize({ r: /a\/b/i }),
      invalid,
    ];
    for (const bytes of declined) {
      expect(bsonToJson(bytes, DEFAULTS)).toBeUndefined();
      expectSame(bytes);
      expectSame(bytes, { enableUtf8Validation: false });
    }
    // Without validation, invalid UTF-8 renders as the decoder replaces it.
    expect(new BsonRecord(invalid, recordReader({ enableUtf8Validation: false })).json()).toBe('{"s":"\ufffd\ufffd"}');
    // With it, the decoder refuses the record, and so the shortcut must not render it.
    expect(bothWays(invalid, {}).expected).toBeInstanceOf(Error);
  });

  it('declines malformed bytes instead of throwing', () => {
    const bytes = BSON.serialize({ a: 'text', b: { c: 1 } });
    for (let cut = 0; cut < bytes.length; cut += 1) {
      const damaged = Buffer.from(bytes);
      damaged[cut] = (damaged[cut] as number) ^ 0x5a;
      expectSame(damaged);
      expectSame(bytes.subarray(0, cut));
    }
  });

  it('is not offered for settings it does not know', () => {
    expect(recordReader({ fieldsAsRaw: { a: true } }).writeJson).toBeUndefined();
    expect(recordReader({ useBigInt64: true, promoteLongs: false }).writeJson).toBeUndefined();
    expect(recordReader({}).writeJson).toBeDefined();
  });
});

describe('records read as BSON, in every format', () => {
  const ctx: RenderContext = { ...pageContext(), callback: 'cb' };
  const head = { count: 3, meta: { page: 1, page_size: 0, pages: 1 }, next: null, previous: null };
  const documents = [
    { _id: new ObjectId('65a1b2c3d4e5f60718293a4b'), text: 'line\u2028sep', when: new Date(0) },
    { _id: 2, d: Decimal128.fromString('1.5'), nested: { a: [1, { b: 'x' }] } }, // Decimal128: through the decoder
    { _id: 3, n: Long.fromNumber(2 ** 40) },
  ];

  for (const format of FORMATS) {
    it(`${format}: the same bytes as the decoded documents`, async () => {
      const reader = recordReader({});
      const decoded = new FakeSink();
      await renderEnvelopeStream(decoded, format, head, fromArray(documents.map((doc) => BSON.deserialize(BSON.serialize(doc)))), ctx);
      const raw = new FakeSink();
      const records = documents.map((doc) => new BsonRecord(BSON.serialize(doc), reader));
      await renderEnvelopeStream(raw, format, head, fromArray(records), ctx);
      expect(raw.body).toBe(decoded.body);
    });
  }

  it('toPlainValue sees a BsonRecord as its document', () => {
    const bytes = BSON.serialize({ a: 1, b: [true] });
    expect(toPlainValue({ wrapped: new BsonRecord(bytes, recordReader({})) })).toEqual({ wrapped: { a: 1, b: [true] } });
  });
});
