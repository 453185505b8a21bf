/**
 * One type rule for numbers on every way in and out (docs/api-behaviour.md, "Numbers"): a JSON
 * literal with a fraction or an exponent (`3.0`, `1e3`, `-0.0`) and `{"$numberDouble": ...}` are
 * stored as doubles, integer literals as int32 (int64 beyond), and every format writes a double
 * so that it reads back as one (`3.0`). Written through the real HTTP API, read back through
 * the driver (the stored BSON types) and through JSON, NDJSON and CSV. Real engine.
 */
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import {
  Binary,
  BSON,
  BSONRegExp,
  Decimal128,
  Double,
  Int32,
  Long,
  MongoClient,
  ObjectId,
  Timestamp,
  type Collection,
  type Document,
} from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mongoClientOptions } from '../../../src/db/mongo-client.js';
import { INSERT_COMMAND_INT64S } from '../../../src/documents/batch-insert.js';
import { parseJsonBody } from '../../../src/documents/extended-json.js';
import { parseRecordJson } from '../../../src/documents/number-literals.js';
import { call, startTestApp, type TestApp } from '../../support/app.js';
import { mongoSettings } from '../worker/support.js';

let app: TestApp;
let token: string;
let mongo: MongoClient;
let base: string;
let stored: Collection<Document>;

beforeAll(async () => {
  app = await startTestApp();
  await app.users.createUser({ username: 'root', password: 'pw-superuser-1', isSuperuser: true });
  token = await app.users.tokenFor('root');
  const db = `${app.prefix}numbers`;
  expect((await call(app.url, 'POST', '/api/data_store/data/', { token, body: { database: db } })).status).toBe(201);
  expect((await call(app.url, 'POST', `/api/data_store/data/${db}/`, { token, body: { collection: 'values' } })).status).toBe(201);
  base = `/api/data_store/data/${db}/values/`;
  const settings = mongoSettings();
  mongo = new MongoClient(settings.uri, mongoClientOptions(settings));
  await mongo.connect();
  stored = mongo.db(db).collection('values');
});

afterAll(async () => {
  await mongo?.close();
  await app?.close();
});

/** The records with these ids as the engine holds them, every number as its BSON class. */
async function storedRecords(ids: readonly string[]): Promise<Document[]> {
  const records = await stored.find({ _id: { $in: [...ids] } } as Document, { promoteValues: false, bsonRegExp: true }).toArray();
  return ids.map((id) => records.find((record) => String(record._id) === id) ?? { missing: id });
}

/** A value's BSON types and values, to compare: canonical Extended JSON (NaN and -0.0 included). */
const canonical = (value: unknown): string => BSON.EJSON.stringify(value as Document, { relaxed: false });

/** The records with these ids through the API in `format` (json, ndjson or csv), as text. */
async function exported(ids: readonly string[], format: 'json' | 'ndjson' | 'csv'): Promise<string> {
  const query = encodeURIComponent(JSON.stringify({ filter: { _id: { $in: ids } }, sort: { _id: 1 } }));
  const res = await call(app.url, 'GET', `${base}?query=${query}&format=${format}`, { token });
  expect(res.status, res.text.slice(0, 300)).toBe(200);
  return res.text;
}

async function post(rawBody: string): Promise<void> {
  const res = await call(app.url, 'POST', base, { token, rawBody });
  expect(res.status, res.text.slice(0, 300)).toBe(201);
}

describe('numbers written as JSON literals and as Extended JSON', () => {
  it('are stored as the type their literal or wrapper names, and found by {"$type": "double"}', async () => {
    await post(
      '[{"_id": "lit", "x": 3.0, "y": 3, "z": -0.0, "e": 1e3, "big": 3000000000, "nested": [{"f": 2.50}]},' +
        ' {"_id": "canon", "x": {"$numberDouble": "3.0"}, "y": {"$numberInt": "3"}, "l": {"$numberLong": "3"}}]',
    );
    const [lit, canon] = (await storedRecords(['lit', 'canon'])).map(canonical);
    expect(lit).toBe(
      canonical({
        _id: 'lit',
        x: new Double(3),
        y: new Int32(3),
        z: new Double(-0),
        e: new Double(1000),
        big: Long.fromNumber(3000000000),
        nested: [{ f: new Double(2.5) }],
      }),
    );
    expect(lit).toContain('"z":{"$numberDouble":"-0.0"}');
    expect(canon).toBe(canonical({ _id: 'canon', x: new Double(3), y: new Int32(3), l: Long.fromNumber(3) }));

    const doubles = encodeURIComponent(JSON.stringify({ filter: { x: { $type: 'double' } }, sort: { _id: 1 } }));
    const found = await call(app.url, 'GET', `${base}?query=${doubles}`, { token });
    expect(found.json.results.map((r: { _id: string }) => r._id)).toEqual(['canon', 'lit']);
  });

  it('are written back so that they read back as the same types, in JSON, NDJSON and CSV', async () => {
    await post('{"_id": "out", "d": 3.0, "z": -0.0, "f": 0.5, "i": 7, "l": 3000000000}');
    const json = (await call(app.url, 'GET', `${base}out/?format=json`, { token })).text;
    expect(json).toBe('{"_id":"out","d":3.0,"z":-0.0,"f":0.5,"i":7,"l":3000000000}');
    expect(await exported(['out'], 'ndjson')).toBe('{"_id":"out","d":3.0,"z":-0.0,"f":0.5,"i":7,"l":3000000000}\n');
    expect(await exported(['out'], 'json')).toContain('"results":[{"_id":"out","d":3.0,"z":-0.0,"f":0.5,"i":7,"l":3000000000}]');
    expect(await exported(['out'], 'csv')).toBe('_id,d,z,f,i,l\r\nout,3.0,-0.0,0.5,7,3000000000\r\n');

    // Distinct values: of one field (the distinct command) and of several (an aggregation).
    const only = encodeURIComponent(JSON.stringify({ filter: { _id: 'out' } }));
    const one = await call(app.url, 'GET', `${base}?query=${only}&distinct=d&format=json`, { token });
    expect(one.text).toContain('"results":[3.0]');
    const two = await call(app.url, 'GET', `${base}?query=${only}&distinct=d,i&format=json`, { token });
    expect(two.text).toContain('"results":[{"d":3.0,"i":7}]');
  });

  it('a merge and a replacement keep doubles too', async () => {
    await post('{"_id": "change", "a": 1}');
    expect((await call(app.url, 'PATCH', `${base}change/`, { token, rawBody: '{"b": 2.0, "c": 2}' })).status).toBe(200);
    expect((await call(app.url, 'PATCH', `${base}change/`, { token, rawBody: '{"$inc": {"n": 1.0}}' })).status).toBe(200);
    expect(canonical(await storedRecords(['change']))).toBe(
      canonical([{ _id: 'change', a: new Int32(1), b: new Double(2), c: new Int32(2), n: new Double(1) }]),
    );
    expect((await call(app.url, 'PUT', `${base}change/`, { token, rawBody: '{"r": 4.0}' })).status).toBe(200);
    expect(canonical(await storedRecords(['change']))).toBe(canonical([{ _id: 'change', r: new Double(4) }]));
  });
});

/** The ids of the records `filter` (a URL query's filter) finds through the API, sorted. */
async function idsFound(filter: Document): Promise<unknown[]> {
  const query = encodeURIComponent(JSON.stringify({ filter, sort: { _id: 1 } }));
  const res = await call(app.url, 'GET', `${base}?query=${query}&page_size=1000`, { token });
  expect(res.status, res.text.slice(0, 300)).toBe(200);
  return (res.json.results as { _id: unknown }[]).map((r) => r._id);
}

/** Sends `rawBody` and expects `status`; answers the response. */
async function send(method: string, path: string, rawBody: string, status = 200): Promise<Awaited<ReturnType<typeof call>>> {
  const res = await call(app.url, method, path, { token, rawBody });
  expect(res.status, res.text.slice(0, 300)).toBe(status);
  return res;
}

describe('integer literals beyond int32 on every write path (stored as int64)', () => {
  const N = '123456789012';
  const long = Long.fromString(N);

  it('insert one, insert many, replace, merge ($set, plain fields, $inc) and update by filter store an int64', async () => {
    await send('POST', base, `{"_id": "w-one", "n": ${N}, "x": 3, "y": 3.0, "beyond": 9007199254740993}`, 201);
    await send('POST', base, `[{"_id": "w-many", "n": ${N}}, {"_id": "w-many-neg", "n": -${N}, "deep": {"a": [${N}]}}]`, 201);
    await send('POST', base, '[{"_id": "w-put"}, {"_id": "w-set"}, {"_id": "w-plain"}, {"_id": "w-inc", "n": 1}, {"_id": "w-bulk"}]', 201);
    await send('PUT', `${base}w-put/`, `{"n": ${N}}`);
    await send('PATCH', `${base}w-set/`, `{"$set": {"n": ${N}}}`);
    await send('PATCH', `${base}w-plain/`, `{"n": ${N}}`);
    // $inc of an int32 field by a 12-digit number: the sum is an int64, as the literal asks.
    await send('PATCH', `${base}w-inc/`, `{"$inc": {"n": ${N}}}`);
    const filter = encodeURIComponent(JSON.stringify({ filter: { _id: 'w-bulk' } }));
    const bulk = await send('PATCH', `${base}?query=${filter}`, `{"$set": {"n": ${N}}}`);
    expect(bulk.json).toMatchObject({ matched_count: 1, modified_count: 1 });

    const written = ['w-bulk', 'w-inc', 'w-many', 'w-many-neg', 'w-one', 'w-plain', 'w-put', 'w-set'];
    expect(await idsFound({ _id: { $in: written }, n: { $type: 'long' } })).toEqual(written);
    const [one, manyNeg, inc] = await storedRecords(['w-one', 'w-many-neg', 'w-inc']);
    expect(canonical(one)).toBe(
      canonical({ _id: 'w-one', n: long, x: new Int32(3), y: new Double(3), beyond: Long.fromString('9007199254740993') }),
    );
    expect(canonical(manyNeg)).toBe(canonical({ _id: 'w-many-neg', n: long.negate(), deep: { a: [long] } }));
    expect(canonical(inc)).toBe(canonical({ _id: 'w-inc', n: long.add(1) }));
  });

  it('$inc of an int64 field by a 12-digit number keeps an int64; $set of 3 and 3.0 keep int32 and double', async () => {
    await send('POST', base, `{"_id": "w-inc64", "n": ${N}, "x": 1, "y": 1}`, 201);
    const merged = await send('PATCH', `${base}w-inc64/`, `{"$inc": {"n": 100000000000}, "$set": {"x": 3, "y": 3.0}}`);
    expect(merged.text).toContain('"n":223456789012');
    expect(canonical(await storedRecords(['w-inc64']))).toBe(
      canonical([{ _id: 'w-inc64', n: Long.fromString('223456789012'), x: new Int32(3), y: new Double(3) }]),
    );
  });

  it('answers int64 _ids as it always has, and stores them as int64', async () => {
    const many = await send('POST', base, '[{"_id": 123456789012}, {"_id": 9007199254740993}, {"_id": -2147483649}]', 201);
    expect(many.text).toBe('{"inserted_ids":[123456789012,"9007199254740993",-2147483649]}');
    const one = await send('POST', base, '{"_id": 223456789012, "n": 1}', 201);
    expect(one.text).toBe('{"_id":223456789012}');
    const ids = [123456789012, -2147483649, 223456789012];
    expect(await stored.countDocuments({ _id: { $in: ids }, $expr: { $eq: [{ $type: '$_id' }, 'long'] } } as Document)).toBe(3);
    const exact = await stored.findOne({ _id: Long.fromString('9007199254740993') } as Document, { promoteValues: false });
    expect(exact?._id).toEqual(Long.fromString('9007199254740993'));
  });

  it('a refused record in a later insert command reports the int64 _ids written before it', async () => {
    // Over INSERT_COMMAND_BYTES of text, so the array is sent as several commands, each made as it is sent.
    const count = 40_000;
    const records = Array.from(
      { length: count },
      (_, i) => `{"_id": ${300_000_000_000 + i}, "v": ${400_000_000_000 + i}, "pad": "${'p'.repeat(8)}"}`,
    );
    records.push(`{"_id": ${300_000_000_000}}`);
    const text = `[${records.join(',')}]`;
    expect(text.length).toBeGreaterThan(1.5 * 1024 * 1024);
    const res = await send('POST', base, text, 409);
    expect(res.json.error.detail).toMatchObject({ inserted_count: count, failed_index: count });
    const insertedIds = res.json.error.detail.inserted_ids as number[];
    expect([insertedIds[0], insertedIds[count - 1]]).toEqual([300_000_000_000, 300_000_000_000 + count - 1]);
    const range = { _id: { $gte: 300_000_000_000, $lt: 300_000_000_000 + count } };
    expect(await stored.countDocuments({ ...range, v: { $type: 'long' }, $expr: { $eq: [{ $type: '$_id' }, 'long'] } } as Document)).toBe(
      count,
    );
  });
});

describe('a body of megabytes', () => {
  it('stores each whole double as a double and each integer as an int, literals repeated in many records included', async () => {
    // Over 2 MiB of text: the rewrite is built in pieces and records share a Double per literal.
    const literals = ['0.0', '-0.0', '1.0', '1.00', '3.0', '2.5', '7'];
    const count = 7 * 4_000;
    const records = Array.from(
      { length: count },
      (_, i) => `{"_id": "mb-${i}", "w": ${literals[i % 7]}, "s": "x, 4.0] ${'p'.repeat(40)}"}`,
    );
    const text = `[${records.join(', ')}]`;
    expect(text.length).toBeGreaterThan(2 * 1024 * 1024);
    await send('POST', base, text, 201);
    const range = { _id: { $regex: '^mb-' } };
    expect(await stored.countDocuments({ ...range, w: { $type: 'double' } } as Document)).toBe((count * 6) / 7);
    expect(await stored.countDocuments({ ...range, w: { $type: 'int' } } as Document)).toBe(count / 7);
    const ids = Array.from({ length: 14 }, (_, i) => `mb-${count - 14 + i}`);
    const values = [new Double(0), new Double(-0), new Double(1), new Double(1), new Double(3), new Double(2.5), new Int32(7)];
    expect(canonical((await storedRecords(ids)).map((record) => record.w as unknown))).toBe(canonical([...values, ...values]));
    expect(await stored.countDocuments({ ...range, s: `x, 4.0] ${'p'.repeat(40)}` } as Document)).toBe(count);
  });
});

describe('bodies mostly of int64s', () => {
  /** The number of records with `_id`s from `prefix` matching `filter`, asked through the API (its `$type` queries). */
  async function countThroughApi(prefix: string, filter: Document): Promise<number> {
    const query = encodeURIComponent(JSON.stringify({ filter: { _id: { $regex: `^${prefix}` }, ...filter } }));
    const res = await call(app.url, 'GET', `${base}?query=${query}&page_size=1`, { token });
    expect(res.status, res.text.slice(0, 300)).toBe(200);
    return res.json.count as number;
  }

  it('an array of records of int64s, sent as several commands by their int64s, is stored exactly, each int64 as one', async () => {
    // 4 int64s a record: 12,000 records are 48,000 int64s, more than two commands' INSERT_COMMAND_INT64S.
    const count = 12_000;
    expect(count * 4).toBeGreaterThan(2 * INSERT_COMMAND_INT64S);
    const beyond = (i: number) => (9_007_199_254_740_993n + BigInt(i)).toString();
    const records = Array.from(
      { length: count },
      (_, i) => `{"_id": "i64r-${i}", "t": ${1_700_000_000_000 + i}, "a": ${300_000_000_000 + i}, "b": ${beyond(i)}, "c": ${i}}`,
    );
    const res = await send('POST', base, `[${records.join(',')}]`, 201);
    expect(res.json.inserted_ids).toHaveLength(count);
    for (const field of ['t', 'a', 'b']) expect(await countThroughApi('i64r-', { [field]: { $type: 'long' } })).toBe(count);
    expect(await countThroughApi('i64r-', { c: { $type: 'int' } })).toBe(count);
    const last = count - 1;
    const [first, end] = await storedRecords(['i64r-0', `i64r-${last}`]);
    expect([first?.t, first?.a, first?.b].map(String)).toEqual([`${1_700_000_000_000}`, `${300_000_000_000}`, beyond(0)]);
    expect([end?.t, end?.a, end?.b].map(String)).toEqual([`${1_700_000_000_000 + last}`, `${300_000_000_000 + last}`, beyond(last)]);
  });

  it('one record of a large int64 array is stored exactly, every item an int64, and read back as the same integers', async () => {
    const n = 400_000;
    const values = Array.from({ length: n }, (_, i) => 100_000_000_000 + i * 7_919);
    await send('POST', base, `{"_id": "i64a-big", "values": [${values.join(',')}, 9223372036854775807]}`, 201);
    const [record] = await storedRecords(['i64a-big']);
    const items = record?.values as unknown[];
    expect(items).toHaveLength(n + 1);
    expect(items.every((item) => item instanceof Long)).toBe(true);
    expect(items.slice(0, n).map((item) => (item as Long).toNumber())).toEqual(values);
    expect((items[n] as Long).toString()).toBe('9223372036854775807');
    expect(await countThroughApi('i64a-', { values: { $type: 'long' } })).toBe(1);
    expect(await countThroughApi('i64a-', { values: { $type: 'double' } })).toBe(0);
    expect(await countThroughApi('i64a-', { values: { $type: 'int' } })).toBe(0);
    const read = await call(app.url, 'GET', `${base}i64a-big/`, { token });
    expect(read.status, read.text.slice(0, 300)).toBe(200);
    const readValues = (read.json.values as unknown[]).slice(0, n);
    expect(readValues).toEqual(values);
  });

  it('one record whose int64 array passes the 16 MiB a record may have is a 400, and nothing is stored', async () => {
    // About 1,100,000 12-digit integers: some 14 MB of text (within the body limit), 17.6 MB of BSON.
    const n = 1_100_000;
    const text = `{"_id": "i64a-over", "values": [${Array.from({ length: n }, (_, i) => 100_000_000_000 + i).join(',')}]}`;
    const res = await call(app.url, 'POST', base, { token, rawBody: text });
    expect([res.status, res.json.error?.code], res.text.slice(0, 300)).toEqual([400, 'record_too_large']);
    expect(res.json.error.detail).toEqual({ max_bson_bytes: 16 * 1024 * 1024 });
    expect(await stored.countDocuments({ _id: 'i64a-over' } as Document)).toBe(0);
  });

  it('an array whose second record passes 16 MiB is a 400 that says the first was written', async () => {
    const n = 1_100_000;
    const text = `[{"_id": "i64a-first"}, {"_id": "i64a-over2", "values": [${Array.from({ length: n }, (_, i) => 100_000_000_000 + i).join(',')}]}]`;
    const res = await call(app.url, 'POST', base, { token, rawBody: text });
    expect([res.status, res.json.error?.code], res.text.slice(0, 300)).toEqual([400, 'record_too_large']);
    expect(res.json.error.detail).toMatchObject({ inserted_ids: ['i64a-first'], inserted_count: 1, failed_index: 1 });
    expect(await stored.countDocuments({ _id: { $in: ['i64a-first', 'i64a-over2'] } } as Document)).toBe(1);
  });

  it('a PUT that makes a record pass 16 MiB is a 400, and the record is unchanged', async () => {
    await send('POST', base, '{"_id": "i64a-put", "kept": 1}', 201);
    const n = 1_100_000;
    const text = `{"values": [${Array.from({ length: n }, (_, i) => 100_000_000_000 + i).join(',')}]}`;
    const res = await call(app.url, 'PUT', `${base}i64a-put/`, { token, rawBody: text });
    expect([res.status, res.json.error?.code], res.text.slice(0, 300)).toEqual([400, 'record_too_large']);
    expect(canonical(await storedRecords(['i64a-put']))).toBe(canonical([{ _id: 'i64a-put', kept: new Int32(1) }]));
  });
});

describe('a body that is one number, not a record', () => {
  // An integer beyond int32 is a number until the driver, a whole double a Double (an object):
  // neither is a record. The Double was a 503 in an array, and a PUT stored its fields.
  it.each(['3.0', '123456789012', '[3.0]', '[123456789012]'])('POST %s is a 400', async (rawBody) => {
    const res = await call(app.url, 'POST', base, { token, rawBody });
    expect([res.status, res.json.error.code]).toEqual([400, 'invalid_body']);
  });

  it.each(['PUT', 'PATCH'])('%s of 3.0 or 123456789012 is a 400', async (method) => {
    await send('POST', base, `{"_id": "one-number-${method}", "kept": 1}`, 201);
    for (const rawBody of ['3.0', '123456789012']) {
      const res = await call(app.url, method, `${base}one-number-${method}/`, { token, rawBody });
      expect([res.status, res.json.error?.code]).toEqual([400, 'invalid_body']);
    }
    expect(canonical(await storedRecords([`one-number-${method}`]))).toBe(canonical([{ _id: `one-number-${method}`, kept: new Int32(1) }]));
  });
});

describe('record bodies read as text', () => {
  it('are refused as express.json refuses them: another charset, text that is not JSON; a compressed body is read', async () => {
    const latin1 = await call(app.url, 'POST', base, { token, rawBody: '{"x": 1.5}', contentType: 'application/json; charset=latin1' });
    expect([latin1.status, latin1.json.error.code]).toEqual([415, 'unsupported_media_type']);
    const broken = await call(app.url, 'POST', base, { token, rawBody: '{"x": 1.5, }' });
    expect([broken.status, broken.json.error.code]).toEqual([400, 'malformed_json']);
    expect(broken.json.error.message).toMatch(/^Request body is not valid JSON: .*position 11/);

    const res = await fetch(new URL(base, app.url), {
      method: 'POST',
      headers: {
        authorization: `Token ${token}`,
        'content-type': 'application/json',
        'content-encoding': 'gzip',
        accept: 'application/json',
      },
      body: gzipSync('{"_id": "zipped", "x": 1.0}'),
    });
    expect(res.status).toBe(201);
    expect(canonical(await storedRecords(['zipped']))).toBe(canonical([{ _id: 'zipped', x: new Double(1) }]));
  });
});

// ---------------------------------------------------------------------------------------------
// Every BSON type, through every way in and out

const INT32_MIN = -(2n ** 31n);
const INT32_MAX = 2n ** 31n - 1n;

const finiteDouble = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer({ min: -1_000_000, max: 1_000_000 }),
  fc.constantFrom(-0, 0, 1e20, 1e21, 5e-324, 2 ** 53),
);
const double = finiteDouble.map((value) => new Double(value));
const anyDouble = fc.oneof(
  double,
  fc.constantFrom(NaN, Infinity, -Infinity).map((value) => new Double(value)),
);
const int32 = fc.integer().map((value) => new Int32(value));
/** Beyond int32: an int64 literal that fits int32 is (by the rule) an int32. */
const int64 = fc
  .bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n })
  .filter((value) => value < INT32_MIN || value > INT32_MAX)
  .map((value) => Long.fromBigInt(value));
const text = fc.string({ maxLength: 12 });
const nonNumbers = fc.oneof(
  fc.integer({ min: -999_999, max: 999_999 }).map((n) => Decimal128.fromString(`${n}.25`)),
  fc.date({ noInvalidDate: true, min: new Date(-1e13), max: new Date(1e13) }),
  fc.uint8Array({ minLength: 12, maxLength: 12 }).map((bytes) => new ObjectId(bytes)),
  fc.uint8Array({ maxLength: 8 }).map((bytes) => new Binary(bytes)),
  fc.stringMatching(/^[a-z]{1,5}$/).map((pattern) => new BSONRegExp(pattern, 'i')),
  fc.record({ t: fc.integer({ min: 1, max: 2 ** 31 }), i: fc.integer({ min: 1, max: 1000 }) }).map((words) => new Timestamp(words)),
);

/** Values plain JSON can write (numbers as literals), nested. */
const { plainValue } = fc.letrec((tie) => ({
  plainValue: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    double,
    int32,
    int64,
    text,
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('plainValue'), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom('a', 'b', 'c'), tie('plainValue'), { maxKeys: 3 }),
  ),
}));
/** Every BSON type a record may hold, nested. */
const { anyValue } = fc.letrec((tie) => ({
  anyValue: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    anyDouble,
    int32,
    int64,
    text,
    fc.boolean(),
    fc.constant(null),
    nonNumbers,
    fc.array(tie('anyValue'), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom('a', 'b', 'c'), tie('anyValue'), { maxKeys: 3 }),
  ),
}));

/** A double as a JSON literal that reads back as a double (written here, not by the code under test). */
function doubleLiteral(value: number): string {
  if (Object.is(value, -0)) return '-0.0';
  return Number.isInteger(value) && Math.abs(value) < 1e21 ? value.toFixed(1) : String(value);
}

/** Plain JSON with number literals (relaxed Extended JSON where a value needs a wrapper). */
function literalJson(value: unknown): string {
  if (value instanceof Double) {
    return Number.isFinite(value.value) ? doubleLiteral(value.value) : `{"$numberDouble":"${String(value.value)}"}`;
  }
  // A Timestamp is a Long to bson (a subclass): it keeps its wrapper.
  if (value instanceof Int32 || (value instanceof Long && !(value instanceof Timestamp))) return value.toString();
  if (value instanceof Date) return `{"$date":{"$numberLong":"${value.getTime()}"}}`;
  if (Array.isArray(value)) return `[${value.map(literalJson).join(',')}]`;
  if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    return `{${Object.entries(value)
      .map(([key, member]) => `${JSON.stringify(key)}:${literalJson(member)}`)
      .join(',')}}`;
  }
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  return BSON.EJSON.stringify(value as Document, { relaxed: false });
}

/**
 * Every number in `original` against the same place in `read` (an export parsed back with the
 * record rules): a double must come back a double of the same value (±Infinity and NaN too, written
 * as {"$numberDouble": ...}; one that is not whole may be a JavaScript number, which the driver
 * stores as a double), an
 * int32 an integer, an int64 the same integer.
 */
function expectSameNumbers(original: unknown, read: unknown, where: string): void {
  if (original instanceof Double) {
    if (!Number.isFinite(original.value) || Number.isInteger(original.value)) {
      expect(read, where).toBeInstanceOf(Double);
      expect(Object.is((read as Double).value, original.value), `${where}: ${String(read)}`).toBe(true);
    } else {
      // A fraction that is not whole is read as a JavaScript number, which is stored as a double.
      const value = read instanceof Double ? read.value : read;
      expect(typeof value === 'number' && !Number.isInteger(value), `${where}: ${String(read)}`).toBe(true);
      expect(Object.is(value, original.value), `${where}: ${String(read)}`).toBe(true);
    }
  } else if (original instanceof Int32) {
    expect(read, where).toBe(original.value);
  } else if (original instanceof Long && !(original instanceof Timestamp)) {
    expect(read instanceof Long ? read.toString() : String(read), where).toBe(original.toString());
  } else if (Array.isArray(original)) {
    original.forEach((item, i) => expectSameNumbers(item, (read as unknown[])[i], `${where}.${i}`));
  } else if (original !== null && typeof original === 'object' && Object.getPrototypeOf(original) === Object.prototype) {
    for (const [key, member] of Object.entries(original)) expectSameNumbers(member, (read as Document)[key], `${where}.${key}`);
  }
}

/** An export's record text, read as a record body is read (number literals typed). */
const readTyped = (json: string): Document => parseJsonBody(parseRecordJson(json)) as Document;

let batch = 0;

describe('every BSON type through every way in and out', () => {
  it('is stored and exported as the same types and values', async () => {
    const fields = (value: fc.Arbitrary<unknown>) => fc.array(value, { minLength: 1, maxLength: 6 });
    await fc.assert(
      fc.asyncProperty(fields(plainValue), fields(anyValue), fields(double), async (plain, any, flat) => {
        batch += 1;
        const record = (way: string, values: unknown[]): Document => ({
          _id: `${batch}-${way}`,
          ...Object.fromEntries(values.map((value, i) => [`f${i}`, value])),
        });
        const ways = {
          plain: record('plain', plain),
          relaxed: record('relaxed', any),
          canonical: record('canonical', any),
          flat: record('flat', [...flat, new Int32(flat.length), Long.fromBigInt(2n ** 40n)]),
        };
        await post(`[${[ways.plain, ways.relaxed, ways.flat].map(literalJson).join(',')}]`);
        await post(BSON.EJSON.stringify([ways.canonical], { relaxed: false }));
        const originals = Object.values(ways);
        const ids = originals.map((original) => original._id as string);

        // The engine holds the same types and values.
        expect((await storedRecords(ids)).map(canonical)).toEqual(originals.map(canonical));

        // So it does through the other writes: one record, a replacement, a merge with $set.
        const { _id: _plainId, ...fieldsOnly } = ways.plain;
        const one = { _id: `${batch}-one`, ...fieldsOnly };
        await post(literalJson(one));
        await send('POST', base, `{"_id": "${batch}-put"}`, 201);
        await send('PUT', `${base}${batch}-put/`, literalJson(fieldsOnly));
        await send('POST', base, `{"_id": "${batch}-set"}`, 201);
        await send('PATCH', `${base}${batch}-set/`, `{"$set": ${literalJson(fieldsOnly)}}`);
        const rewritten = [one, { _id: `${batch}-put`, ...fieldsOnly }, { _id: `${batch}-set`, ...fieldsOnly }];
        expect((await storedRecords(rewritten.map((r) => r._id))).map(canonical)).toEqual(rewritten.map(canonical));

        // JSON and NDJSON write numbers that read back as the same types.
        const sorted = [...originals].sort((a, b) => (a._id < b._id ? -1 : 1));
        const envelope = await exported(ids, 'json');
        const results = (JSON.parse(envelope) as { results: unknown[] }).results;
        const lines = (await exported(ids, 'ndjson')).trimEnd().split('\n');
        expect(lines).toHaveLength(sorted.length);
        sorted.forEach((original, i) => {
          expectSameNumbers(original, readTyped(lines[i]!), `ndjson ${original._id as string}`);
          expect(JSON.parse(lines[i]!)).toEqual(results[i]);
        });
        const resultsText = envelope.slice(envelope.indexOf('"results":') + '"results":'.length, -1);
        const typedResults = parseJsonBody(parseRecordJson(resultsText)) as Document[];
        sorted.forEach((original, i) => expectSameNumbers(original, typedResults[i], `json ${original._id as string}`));

        // CSV: the flat record's cells (all numbers) are typed by their text.
        const csvQuery = encodeURIComponent(JSON.stringify({ filter: { _id: ways.flat._id } }));
        const csv = (await call(app.url, 'GET', `${base}?query=${csvQuery}&format=csv`, { token })).text;
        const [header, row] = csv.split('\r\n');
        const cells = Object.fromEntries(header!.split(',').map((column, i) => [column, row!.split(',')[i]!]));
        expectSameNumbers(
          ways.flat,
          readTyped(`{${Object.entries(cells).map(([k, v]) => `"${k}":${k === '_id' ? `"${v}"` : v}`)}}`),
          'csv',
        );
      }),
      {
        numRuns: 30,
        examples: [[[new Int32(0)], [Long.fromNumber(4294967297), new Double(NaN), new Timestamp({ t: 1, i: 1 })], [new Double(-0)]]],
      },
    );
  });
});
