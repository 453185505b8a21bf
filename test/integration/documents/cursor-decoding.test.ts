/**
 * The store's cursors read records as BSON bytes and decode each one only when it is handed on:
 * a batch is never decoded whole. Records still come out exactly as the driver decodes them
 * with the store's settings (every BSON type the API renders; regular expressions as
 * BSONRegExp, see DocumentStore.collection), for finds and aggregations alike. Real engine.
 */
import { Binary, BSON, BSONRegExp, Decimal128, Double, Int32, Long, MongoClient, ObjectId, UUID, type Document } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mongoClientOptions } from '../../../src/db/mongo-client.js';
import { BudgetedCursor, recordSpans, takeBatch, type DriverResponse } from '../../../src/documents/budgeted-cursor.js';
import { recordReader } from '../../../src/documents/raw-records.js';
import { BatchBudget } from '../../../src/documents/batch-bytes.js';
import { DocumentStore } from '../../../src/documents/store.js';
import { BsonRecord } from '../../../src/render/bson-record.js';
import { toPlainValue } from '../../../src/render/plain-value.js';
import { mongoSettings, unique } from '../worker/support.js';

const DATABASE = 'cybercom_test';
/** More than one batch (the first holds 101 records). */
const RECORDS = 250;

/** The store's decoding of records, beyond the client's settings. */
const STORE_DECODING = { bsonRegExp: true };

let mongo: MongoClient;
let collection: string;

/** Every kind of value a stored record may hold. */
function record(n: number): Document {
  return {
    n,
    text: `record ${n} — ünïcödé`,
    double: new Double(n + 0.5),
    int: new Int32(n),
    long: Long.fromString('9007199254740993'),
    decimal: Decimal128.fromString('1234567890.123456789'),
    when: new Date(Date.UTC(2001, 3, 1, 0, 0, n % 60)),
    ref: new ObjectId(),
    bytes: new Binary(Buffer.from([0, 1, 2, n % 256])),
    uuid: new UUID(),
    flag: n % 2 === 0,
    nothing: null,
    nested: { list: [1, 'two', { three: 3 }], deeper: { when: new Date(0) } },
    pattern: /^site-\d+$/i,
  };
}

beforeAll(async () => {
  const settings = mongoSettings();
  mongo = new MongoClient(settings.uri, mongoClientOptions(settings));
  await mongo.connect();
  collection = unique('decoding');
  await mongo
    .db(DATABASE)
    .collection(collection)
    .insertMany(Array.from({ length: RECORDS }, (_, n) => record(n)));
});

afterAll(async () => {
  await mongo
    ?.db(DATABASE)
    .collection(collection)
    .drop()
    .catch(() => undefined);
  await mongo?.close();
});

async function all(cursor: BudgetedCursor): Promise<Document[]> {
  const out: Document[] = [];
  for await (const record of cursor) out.push(record.decode());
  await cursor.close();
  return out;
}

describe('records read through the store', () => {
  it('come out of a find exactly as the driver decodes them', async () => {
    const store = new DocumentStore(mongo, mongo.db(DATABASE), 30_000);
    const expected = await mongo.db(DATABASE).collection(collection, STORE_DECODING).find({}).sort({ n: 1 }).toArray();
    const read = await all(store.find(DATABASE, collection, { filter: {}, sort: { n: 1 }, skip: 0, limit: 0 }, store.budget()));
    expect(read).toHaveLength(RECORDS);
    expect(read).toStrictEqual(expected);
    expect(read[0]?.ref).toBeInstanceOf(ObjectId);
    expect(read[0]?.when).toBeInstanceOf(Date);
    expect(read[0]?.decimal).toBeInstanceOf(Decimal128);
    expect(read[0]?.pattern).toBeInstanceOf(BSONRegExp);
  });

  it('render as JSON from their bytes exactly as the driver-decoded records render', async () => {
    const store = new DocumentStore(mongo, mongo.db(DATABASE), 30_000);
    // Without the Decimal128 and the regular expression (left to the decoder), each record is
    // written straight from its bytes.
    const projection = { decimal: 0, pattern: 0 };
    const expected = await mongo.db(DATABASE).collection(collection).find({}, { projection }).sort({ n: 1 }).toArray();
    const cursor = store.find(DATABASE, collection, { filter: {}, projection, sort: { n: 1 }, skip: 0, limit: 0 }, store.budget());
    const texts: string[] = [];
    for await (const record of cursor) texts.push(record.json() ?? 'declined');
    await cursor.close();
    expect(texts).toStrictEqual(expected.map((doc) => JSON.stringify(toPlainValue(doc))));
  });

  it('come out of an aggregation exactly as the driver decodes them', async () => {
    const store = new DocumentStore(mongo, mongo.db(DATABASE), 30_000);
    const pipeline = [{ $match: { n: { $lt: 150 } } }, { $sort: { n: -1 } }];
    const expected = await mongo.db(DATABASE).collection(collection, STORE_DECODING).aggregate(pipeline).toArray();
    const read = await all(store.aggregate(DATABASE, collection, pipeline, store.budget()));
    expect(read).toHaveLength(150);
    expect(read).toStrictEqual(expected);
  });
});

describe('BudgetedCursor', () => {
  it("takes a batch's records as the bytes the driver hands out, from the driver's own list of them", async () => {
    const col = mongo.db(DATABASE).collection(collection);
    const driver = col.find({}, { raw: true }).sort({ n: 1 });
    const ours = col.find({}, { raw: true }).sort({ n: 1 });
    for (let batches = 0; batches < 2; batches += 1) {
      expect(await driver.hasNext()).toBe(true);
      expect(await ours.hasNext()).toBe(true);
      const expected = (driver.readBufferedDocuments() as unknown as Uint8Array[]).map((bytes) => Buffer.from(bytes));
      // The driver keeps its batch as takeBatch reads it (else every read would take the
      // driver's way, which makes each record a parsed document first).
      expect(recordSpans((ours as unknown as { documents: DriverResponse }).documents)).toBeDefined();
      const batch = takeBatch(ours);
      expect(ours.bufferedCount()).toBe(0);
      expect(batch.count).toBe(expected.length);
      expect(batch.bytes).toBe(expected.reduce((sum, bytes) => sum + bytes.length, 0));
      expect(Array.from({ length: batch.count }, (_, index) => Buffer.from(batch.record(index)))).toStrictEqual(expected);
    }
    await driver.close();
    await ours.close();
  });

  it('decodes each record when it is handed on, not the whole batch with the first', async () => {
    const store = new DocumentStore(mongo, mongo.db(DATABASE), 30_000);
    const col = mongo.db(DATABASE).collection(collection);
    const reader = recordReader(col.bsonOptions);
    let decoded = 0;
    const cursor = new BudgetedCursor(
      async (maxTimeMS, signal) => col.find({}, { raw: true, maxTimeMS, signal }).sort({ n: 1 }),
      store.budget(),
      {
        decode: (bytes) => {
          decoded += 1;
          return reader.decode(bytes);
        },
      },
      new BatchBudget(),
    );
    const seen: number[] = [];
    for await (const record of cursor) {
      seen.push(record.decode().n as number);
      // The first batch holds 101 records; only those handed on so far were decoded.
      expect(decoded).toBe(seen.length);
    }
    await cursor.close();
    expect(seen).toEqual(Array.from({ length: RECORDS }, (_, n) => n));
  });

  it('decodes bytes with the client settings: without UTF-8 validation when the client turns it off', () => {
    // Invalid UTF-8 in a string: refused when validating, read as U+FFFD when not.
    const bytes = BSON.serialize({ s: 'x' });
    const broken = Buffer.from(bytes);
    broken[broken.length - 3] = 0xff;
    expect(() => recordReader({ enableUtf8Validation: true }).decode(broken)).toThrow();
    expect(recordReader({ enableUtf8Validation: false }).decode(broken)).toEqual({ s: '\ufffd' });
    // Written as JSON straight from the bytes, the same: refused (left to the decoder), or U+FFFD.
    expect(new BsonRecord(broken, recordReader({ enableUtf8Validation: true })).json()).toBeUndefined();
    expect(new BsonRecord(broken, recordReader({ enableUtf8Validation: false })).json()).toBe('{"s":"\ufffd"}');
  });
});
