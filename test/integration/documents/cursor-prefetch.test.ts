/**
 * A long read through the store's cursor keeps the engine busy while the records already fetched
 * are rendered: the next batch is asked for as soon as a batch is taken, not after its last
 * record was handed on. Observed on the real engine through the driver's command events.
 */
import { MongoClient, type CommandStartedEvent } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BATCH_BYTES } from '../../../src/documents/batch-bytes.js';
import { mongoClientOptions } from '../../../src/db/mongo-client.js';
import { DocumentStore } from '../../../src/documents/store.js';
import { mongoSettings, unique } from '../worker/support.js';

const DATABASE = 'cybercom_test';
/** Several default-sized batches (the first holds 101 records). */
const RECORDS = 450;

let mongo: MongoClient;
let collection: string;
/** Records of about 1 kB: the first batch (101 of them) is more than one chunk of output. */
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
    for await (const doc of cursor) {
      seen.push(doc.n as number);
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

  it('keeps the engine batch size while less than a chunk of output was read', async () => {
    const store = new DocumentStore(mongo, mongo.db(DATABASE), 30_000);
    const cursor = store.find(DATABASE, collection, { filter: {}, sort: { n: 1 }, skip: 0, limit: 0 }, store.budget());
    const before = getMores.length;
    let read = 0;
    for await (const _ of cursor) read += 1;
    expect(read).toBe(RECORDS);
    // 101 small records are a few kB: the batch after them is the engine's (the rest at once).
    expect(getMores.slice(before).map((event) => event.command.batchSize)).toEqual([undefined]);
  });

  it('sizes the batches after the first chunk of output in bytes, not records', async () => {
    const store = new DocumentStore(mongo, mongo.db(DATABASE), 30_000);
    const cursor = store.find(DATABASE, large, { filter: {}, sort: { n: 1 }, skip: 0, limit: 0 }, store.budget());
    const before = getMores.length;
    const seen: number[] = [];
    for await (const doc of cursor) seen.push(doc.n as number);
    expect(seen).toEqual(Array.from({ length: LARGE_RECORDS }, (_, n) => n));
    const sizes = getMores.slice(before).map((event) => Number(event.command.batchSize));
    // Left alone the engine would send the 2,399 records after the first batch in one.
    expect(sizes.length).toBeGreaterThan(1);
    for (const size of sizes) {
      expect(size).toBeGreaterThan(BATCH_BYTES / 1100);
      expect(size).toBeLessThan(BATCH_BYTES / 1000);
    }
  });
});
