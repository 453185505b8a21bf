/**
 * The local MongoDB-wire server answers lookups by _id from the _id index and filtered pages from
 * secondary indexes: every result upsert, record read and filtered listing depends on it (a scan
 * per request made the previous engine unusable at 100,000 records). Checked through `explain`.
 */
import type { MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectMongo } from '../../../src/db/mongo-client.js';
import { testServices } from '../../support/services.js';
import { mongoSettings, unique } from '../worker/support.js';

let mongo: MongoClient;

beforeAll(async () => {
  mongo = await connectMongo(mongoSettings());
});

afterAll(async () => {
  await mongo?.close();
});

function usesIndex(kind: string, explain: Record<string, unknown>, indexName: string): boolean {
  const text = JSON.stringify(explain);
  // FerretDB reports PostgreSQL's plan (with the MongoDB index name); mongod its winning plan stages.
  if (kind === 'ferretdb') return text.includes(`"Index Name":"${indexName}"`);
  return indexName === '_id_' ? /IDHACK|EXPRESS_IXSCAN|IXSCAN/.test(text) : text.includes(`"indexName":"${indexName}"`);
}

const usesIdIndex = (kind: string, explain: Record<string, unknown>): boolean => usesIndex(kind, explain, '_id_');

describe('lookups by _id', () => {
  it.each([
    ['a string _id', 'task-0042'],
    ['an ObjectId-like string', '65f0c0ffee0000000000002a'],
  ])('find with %s uses the _id index, and updates find the document', async (_label, id) => {
    const col = mongo.db('cybercom_test').collection<{ _id: string; n: number }>(unique('idx'));
    await col.insertMany(Array.from({ length: 50 }, (_, n) => ({ _id: n === 42 ? id : `doc-${n}`, n })));
    const explain = await col.find({ _id: id }).explain();
    expect(usesIdIndex(testServices().mongo.kind, explain), JSON.stringify(explain)).toBe(true);
    expect(await col.findOne({ _id: id })).toEqual({ _id: id, n: 42 });
    await col.replaceOne({ _id: id }, { n: 4242 }, { upsert: true });
    expect(await col.findOne({ _id: id })).toEqual({ _id: id, n: 4242 });
    expect(await col.countDocuments()).toBe(50);
    await col.drop();
  });

  it('uses the index for ObjectId values too', async () => {
    const col = mongo.db('cybercom_test').collection(unique('idx'));
    const { insertedIds } = await col.insertMany(Array.from({ length: 20 }, (_, n) => ({ n })));
    const explain = await col.find({ _id: insertedIds[7] }).explain();
    expect(usesIdIndex(testServices().mongo.kind, explain), JSON.stringify(explain)).toBe(true);
    expect((await col.findOne({ _id: insertedIds[7] }))?.n).toBe(7);
    await col.drop();
  });
});

describe('filtered pages', () => {
  it('a filtered page and a range filter with a sort use the secondary indexes, not a scan', async () => {
    const col = mongo.db('cybercom_test').collection(unique('idx'));
    const sites = ['norman', 'tulsa', 'boise', 'ames', 'lawton', 'enid', 'ada', 'alva'];
    const padding = 'x'.repeat(200);
    for (let batch = 0; batch < 4; batch++) {
      await col.insertMany(
        Array.from({ length: 2500 }, (_, i) => ({
          site: sites[(batch * 2500 + i) % sites.length],
          year: 1900 + ((batch * 2500 + i) % 120),
          padding,
        })),
      );
    }
    await col.createIndexes([
      { key: { site: 1 }, name: 'site_1' },
      { key: { year: 1 }, name: 'year_1' },
    ]);
    const kind = testServices().mongo.kind;
    const page = await col.find({ site: 'tulsa' }).limit(50).explain();
    expect(usesIndex(kind, page, 'site_1'), JSON.stringify(page)).toBe(true);
    const range = await col
      .find({ year: { $gt: 2010 } })
      .sort({ year: 1 })
      .limit(50)
      .explain();
    expect(usesIndex(kind, range, 'year_1'), JSON.stringify(range)).toBe(true);
    expect(await col.countDocuments({ site: 'tulsa' })).toBe(1250);
    await col.drop();
  });
});

describe('TTL indexes', () => {
  // Browser sessions expire through one (the session store creates it); the engine deletes in
  // a background job, so this waits for that job rather than for a fixed time. The test set-up
  // runs the job every 2 s (ttlIntervalSeconds) instead of the engine's once a minute: the
  // deadline leaves room for several runs of it, and for one of a minute's schedule only by luck.
  it('delete expired documents in the background and keep the others', async () => {
    const col = mongo.db('cybercom_test').collection(unique('ttl'));
    await col.createIndex({ expires: 1 }, { expireAfterSeconds: 0 });
    await col.insertMany([
      { expires: new Date(Date.now() - 60_000), n: 1 },
      { expires: new Date(Date.now() + 3_600_000), n: 2 },
    ]);
    const deadline = Date.now() + 20_000;
    while ((await col.countDocuments()) > 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 1_000));
    expect(await col.find({}, { projection: { _id: 0, n: 1 } }).toArray()).toEqual([{ n: 2 }]);
    await col.drop();
  });
});
