/**
 * A long read through the store's cursor keeps the engine busy while the records already fetched
 * are rendered: the next batch is asked for as soon as a batch is taken, not after its last
 * record was handed on. Observed on the real engine through the driver's command events.
 */
import { MongoClient, type CommandStartedEvent } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mongoClientOptions } from '../../../src/db/mongo-client.js';
import { DocumentStore } from '../../../src/documents/store.js';
import { mongoSettings, unique } from '../worker/support.js';

const DATABASE = 'cybercom_test';
/** Several default-sized batches (the first holds 101 records). */
const RECORDS = 450;

let mongo: MongoClient;
let collection: string;
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
});

afterAll(async () => {
  await mongo
    ?.db(DATABASE)
    .collection(collection)
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
});
