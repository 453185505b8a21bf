/**
 * Per-item outcomes of real bulk writes against the MongoDB-wire server: what the batched
 * task-log writer relies on to tell each caller whether its own document was written.
 */
import type { MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectMongo } from '../../../src/db/mongo-client.js';
import { bulkInsertOutcomes } from '../../../src/db/bulk-outcomes.js';
import { WriteBatcher } from '../../../src/db/write-batcher.js';
import { mongoSettings, unique } from '../worker/support.js';

let mongo: MongoClient;
const database = 'cybercom_test';

beforeAll(async () => {
  mongo = await connectMongo(mongoSettings());
});

afterAll(async () => {
  await mongo?.close();
});

async function outcomesOf(write: () => Promise<unknown>, count: number) {
  try {
    await write();
    return bulkInsertOutcomes(count, undefined);
  } catch (error) {
    return bulkInsertOutcomes(count, error);
  }
}

describe('bulkInsertOutcomes', () => {
  it('unordered insertMany: only the duplicate fails, the others are written', async () => {
    const col = mongo.db(database).collection<{ _id: string }>(unique('bulk'));
    await col.insertOne({ _id: 'b' });
    const docs = [{ _id: 'a' }, { _id: 'b' }, { _id: 'c' }];
    const outcomes = await outcomesOf(() => col.insertMany(docs, { ordered: false }), 3);
    expect(outcomes[0]).toBeNull();
    expect(outcomes[1]).toMatchObject({ code: 11000 });
    expect(outcomes[2]).toBeNull();
    expect((await col.find().sort({ _id: 1 }).toArray()).map((d) => d._id)).toEqual(['a', 'b', 'c']);
    await col.drop();
  });

  it('rethrows errors that are not about single writes', () => {
    expect(() => bulkInsertOutcomes(2, new Error('socket closed'))).toThrow('socket closed');
  });

  it('a WriteBatcher over insertMany writes every concurrent document once, in few round trips', async () => {
    const col = mongo.db(database).collection<{ _id: number }>(unique('bulk'));
    let roundTrips = 0;
    const batcher = new WriteBatcher<{ _id: number }>(async (docs) => {
      roundTrips++;
      return outcomesOf(() => col.insertMany([...docs], { ordered: false }), docs.length);
    });
    await Promise.all(Array.from({ length: 200 }, (_, i) => batcher.write({ _id: i })));
    expect(await col.countDocuments()).toBe(200);
    expect(roundTrips).toBeLessThan(200);
    const duplicate = await batcher.write({ _id: 7 }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(duplicate).toMatchObject({ code: 11000 });
    await col.drop();
  });
});
