/**
 * An array insert builds each record's BSON once. The driver serializes a record as it adds it to
 * a wire batch, measures the batch by those bytes and sends the same bytes as the insert
 * command's document sequence (without auto-encryption, which needs the command as a document).
 * Measuring the records' bytes beside it (calculateObjectSize, for a limit of our own) would be
 * a second pass over every record. Counted by a value whose toBSON every pass over its record
 * calls: a serialization and a size calculation alike.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApp, type TestApp } from '../../support/app.js';

let app: TestApp;
let token: string;
let db: string;
const col = 'readings';

beforeAll(async () => {
  app = await startTestApp();
  await app.users.createUser({ username: 'root', password: 'pw-superuser-1', isSuperuser: true });
  token = await app.users.tokenFor('root');
  db = `${app.prefix}bson`;
  expect((await call(app.url, 'POST', '/api/data_store/data/', { token, body: { database: db } })).status).toBe(201);
  expect((await call(app.url, 'POST', `/api/data_store/data/${db}/`, { token, body: { collection: col } })).status).toBe(201);
});

afterAll(async () => {
  await app?.close();
});

describe('an array insert', () => {
  it('serializes each record once, and stores them all in order with their ids', async () => {
    let passes = 0;
    // Stored as the int32 1; every pass of the serializer over its record calls toBSON.
    const probe = { toBSON: () => ((passes += 1), 1) };
    const count = 3000;
    const records = Array.from({ length: count }, (_, i) => ({ i, probe, pad: 'x'.repeat(500) }));
    // The store's insertMany is what the records route calls with the body's records.
    const ids = await app.ctx.documents.dataStore.store.insertMany(db, col, records);
    expect(passes).toBe(count);
    expect(ids).toHaveLength(count);
    const query = encodeURIComponent(JSON.stringify({ filter: { probe: 1 }, sort: { i: 1 } }));
    const res = await call(app.url, 'GET', `/api/data_store/data/${db}/${col}/?query=${query}&page_size=2`, { token });
    expect(res.status).toBe(200);
    expect(res.json.count).toBe(count);
    expect(res.json.results.map((r: { _id: unknown }) => r._id)).toEqual(ids.slice(0, 2).map(String));
  });
});
