/**
 * A long read through the store's cursor keeps the engine busy while the records already fetched
 * are rendered: the next batch is asked for as soon as a batch is taken, not after its last
 * record was handed on. Observed on the real engine through the driver's command events.
 */
import { MongoClient, type CommandStartedEvent } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mongoClientOptions } from '../../../src/db/mongo-client.js';
import { STREAM_BATCH_BUDGET } from '../../../src/documents/batch-bytes.js';
import { DocumentStore } from '../../../src/documents/store.js';
import { mongoSettings, unique } from '../worker/support.js';

const DATABASE = 'cybercom_test';
/** Several default-sized batches (the first holds 101 records). */
const RECORDS = 450;

let mongo: MongoClient;
let collection: string;
/** Records of about 1 kB, for a read of several batches that takes a while to render. */
let large: string;
const LARGE_RECORDS = 2_500;
const getMores: CommandStartedEvent[] = [];

beforeAll(async () => {
  const settings = mongoSettings();
  mongo = new MongoClient(settings.uri, { ...mongoClientOptions(settings), monitorCommands: true });
  await mongo.connect();
  mongo.on('commandStarted', (event) => {
    if (event.commandName === 'getMore') getMores.push(event);
  });
  collection = unique('prefetch');
  await mongo
    .db(DATABASE)
    .collection(collection)
    .insertMany(Array.from({ length: RECORDS }, (_, n) => ({ n })));
  large = unique('prefetch_large');
  await mongo
    .db(DATABASE)
    .collection(large)
    .insertMany(Array.from({ length: LARGE_RECORDS }, (_, n) => ({ n, note: 'x'.repeat(1000) })));
});

afterAll(async () => {
  await mongo
    ?.db(DATABASE)
    .collection(collection)
    .drop()
    .catch(() => undefined);
  await mongo
    ?.db(DATABASE)
    .collection(large)
    .drop()
    .catch(() => undefined);
  await mongo?.close();
});

const settle = () => new Promise((resolve) => setTimeout(resolve, 100));

describe('BudgetedCursor', () => {
  it('asks for the next batch while the current one is still being read, and returns every record once, in order', async () => {
    const store = new DocumentStore(mongo, mongo.db(DATABASE), 30_000);
    const cursor = store.find(DATABASE, collection, { filter: {}, sort: { n: 1 }, skip: 0, limit: 0 }, store.budget());
    const seen: number[] = [];
    const before = getMores.length;
    for await (const record of cursor) {
      seen.push(record.decode().n as number);
      if (seen.length === 1) {
        await settle();
        // Only the first of the 101 records of the first batch was read: the second batch is on its way.
        expect(getMores.length - before).toBe(1);
      }
    }
    expect(seen).toEqual(Array.from({ length: RECORDS }, (_, n) => n));
    await cursor.close();
  });

  it('closes cleanly when the reader stops with a batch asked for ahead', async () => {
    const store = new DocumentStore(mongo, mongo.db(DATABASE), 30_000);
    const cursor = store.find(DATABASE, collection, { filter: {}, sort: { n: 1 }, skip: 0, limit: 0 }, store.budget());
    let read = 0;
    for await (const _ of cursor) {
      read += 1;
      if (read === 3) break;
    }
    await cursor.close();
    expect(read).toBe(3);
  });

  it('sizes the batches after the first in bytes, from the share of the batch budget each read has', async () => {
    const store = new DocumentStore(mongo, mongo.db(DATABASE), 30_000);
    const read = async (): Promise<number[]> => {
      const cursor = store.find(DATABASE, large, { filter: {}, sort: { n: 1 }, skip: 0, limit: 0 }, store.budget());
      const seen: number[] = [];
      for await (const record of cursor) seen.push(record.decode().n as number);
      await cursor.close();
      expect(seen).toEqual(Array.from({ length: LARGE_RECORDS }, (_, n) => n));
      return seen;
    };
    const sizes = async (reads: number): Promise<number[]> => {
      const before = getMores.length;
      await Promise.all(Array.from({ length: reads }, read));
      return getMores.slice(before).map((event) => Number(event.command.batchSize));
    };
    // Records of a little over 1 kB. Alone, a read gets half the budget per batch: the 2,399
    // records after the first batch come in one.
    const alone = await sizes(1);
    expect(alone).toHaveLength(1);
    expect(alone[0]).toBeGreaterThan(STREAM_BATCH_BUDGET / 2 / 1100);
    // Sixteen reads at once share it: once all have joined, each batch holds about 1/32 of it
    // (the first to join may have asked for a larger one before the others came).
    const shared = (await sizes(16)).sort((a, b) => a - b);
    expect(shared.length).toBeGreaterThan(16);
    expect(shared[Math.floor(shared.length / 2)]).toBeLessThan(STREAM_BATCH_BUDGET / 8 / 1000);
    expect(shared[0]).toBeLessThan(STREAM_BATCH_BUDGET / 16 / 1000);
  });

  it('counts a batch asked for ahead only while the reader waits for it, not while the API renders the one before', async () => {
    // A busy API: 20 ms of rendering per record of the first batch (the engine's first 101), 2 s
    // in all, against a 1.5 s query time limit the engine itself needs only a fraction of; each
    // batch of the rest is asked for while the one before is rendered.
    const store = new DocumentStore(mongo, mongo.db(DATABASE), 1_500);
    const cursor = store.find(DATABASE, large, { filter: {}, sort: { n: 1 }, skip: 0, limit: 0 }, store.budget());
    let read = 0;
    for await (const _ of cursor) {
      read += 1;
      const until = performance.now() + (read <= 101 ? 20 : 0);
      while (performance.now() < until) {
        // rendering
      }
    }
    await cursor.close();
    expect(read).toBe(LARGE_RECORDS);
  });
});
