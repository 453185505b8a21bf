/**
 * The local MongoDB-wire server answers lookups by _id from the _id index. FerretDB v1.24.2's
 * SQLite backend does not out of the box (its query expression differs from its index's), which
 * made every result upsert and record read scan the whole collection; ops/prepare-local.sh
 * builds it with the fix. Checked through `explain`, so a binary built without it fails here.
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

function usesIdIndex(kind: string, explain: Record<string, unknown>): boolean {
  const text = JSON.stringify(explain);
  // FerretDB reports SQLite's query plan; mongod its winning plan stages.
  return kind === 'ferretdb' ? /SEARCH \S+ USING INDEX \S+__id_/.test(text) : /IDHACK|EXPRESS_IXSCAN|IXSCAN/.test(text);
}

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
