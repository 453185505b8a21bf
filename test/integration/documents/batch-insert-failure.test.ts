/**
 * An array insert whose database command fails part-way must report exactly the records that
 * were written: the connection to the database is cut (through a relay the test controls) in the
 * middle of the insert command, after the database answered it, or for longer than the API waits.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApp, type TestApp } from '../../support/app.js';
import { TcpProxy, withPort } from '../../support/tcp-proxy.js';
import { testServices } from '../../support/services.js';

let app: TestApp;
let proxy: TcpProxy;
let token: string;
let db: string;

/** ≈ 2 MB of records: one insert command, far larger than anything else on the connection. */
const BATCH_BYTES_THRESHOLD = 512 * 1024;
const records = (n: number, tag: string) => Array.from({ length: n }, (_, i) => ({ tag, i, pad: 'x'.repeat(1000) }));

async function countTagged(col: string, tag: string): Promise<number> {
  const query = encodeURIComponent(JSON.stringify({ filter: { tag } }));
  const res = await call(app.url, 'GET', `/api/data_store/data/${db}/${col}/?query=${query}&page_size=1`, { token });
  expect(res.status).toBe(200);
  return res.json.count as number;
}

beforeAll(async () => {
  const services = testServices();
  proxy = await new TcpProxy(services.mongo.port).start();
  app = await startTestApp({ MONGO_URI: withPort(services.env.MONGO_URI as string, proxy.port) });
  await app.users.createUser({ username: 'root', password: 'pw-superuser-1', isSuperuser: true });
  token = await app.users.tokenFor('root');
  db = `${app.prefix}batch`;
  expect((await call(app.url, 'POST', '/api/data_store/data/', { token, body: { database: db } })).status).toBe(201);
  for (const collection of ['cut_request', 'cut_reply', 'cut_long', 'dupes', 'decimals']) {
    expect((await call(app.url, 'POST', `/api/data_store/data/${db}/`, { token, body: { collection } })).status).toBe(201);
  }
});

afterAll(async () => {
  await app?.close();
  await proxy?.close();
});

describe('an array insert that fails part-way', () => {
  it('reports no ids when the command was cut before the database had all of it', async () => {
    proxy.dropOnce('request', BATCH_BYTES_THRESHOLD);
    const res = await call(app.url, 'POST', `/api/data_store/data/${db}/cut_request/`, { token, body: records(2000, 'cut') });
    expect(res.status).toBe(503);
    expect(res.json.error.code).toBe('database_unavailable');
    expect(res.json.error.detail.inserted_ids).toEqual([]);
    expect(res.json.error.detail.inserted_count).toBe(0);
    expect(res.json.error.detail.failed_index).toBe(0);
    expect(await countTagged('cut_request', 'cut')).toBe(0);
  });

  it('reports every id when the database wrote them all and only its answer was lost', async () => {
    proxy.dropOnce('reply', BATCH_BYTES_THRESHOLD);
    const res = await call(app.url, 'POST', `/api/data_store/data/${db}/cut_reply/`, { token, body: records(2000, 'done') });
    expect(res.status).toBe(503);
    expect(res.json.error.detail.inserted_count).toBe(2000);
    expect(res.json.error.detail.inserted_ids).toHaveLength(2000);
    expect(res.json.error.detail.unconfirmed_ids).toBeUndefined();
    expect(await countTagged('cut_reply', 'done')).toBe(2000);
    // The ids reported are the stored records' ids.
    const first = res.json.error.detail.inserted_ids[0] as string;
    expect((await call(app.url, 'GET', `/api/data_store/data/${db}/cut_reply/${first}/`, { token })).json.i).toBe(0);
  });

  it('says which ids are unconfirmed when the database cannot be asked afterwards', async () => {
    // Down for longer than the API keeps asking.
    proxy.dropOnce('request', BATCH_BYTES_THRESHOLD, 10_000);
    const res = await call(app.url, 'POST', `/api/data_store/data/${db}/cut_long/`, { token, body: records(2000, 'long') });
    expect(res.status, JSON.stringify(res.json).slice(0, 600)).toBe(503);
    expect(res.json.error.detail.inserted_ids).toEqual([]);
    expect(res.json.error.detail.unconfirmed_ids, JSON.stringify(res.json.error).slice(0, 600)).toHaveLength(2000);
    await new Promise((r) => setTimeout(r, 10_500));
    expect(await countTagged('cut_long', 'long')).toBe(0);
  }, 40_000);

  it('still reports the exact prefix when the database refuses one record', async () => {
    expect((await call(app.url, 'POST', `/api/data_store/data/${db}/dupes/`, { token, body: { _id: 'c' } })).status).toBe(201);
    const res = await call(app.url, 'POST', `/api/data_store/data/${db}/dupes/`, {
      token,
      body: [{ _id: 'a' }, { _id: 'b' }, { _id: 'c' }, { _id: 'd' }],
    });
    expect(res.status).toBe(409);
    expect(res.json.error.detail).toEqual({ inserted_ids: ['a', 'b'], inserted_count: 2, failed_index: 2 });
  });

  it('reports exactly the stored records for a batch with a $numberDecimal value', async () => {
    const body = [
      { _id: 'x1', n: 1 },
      { _id: 'x2', n: { $numberDecimal: '1.5' } },
      { _id: 'x3', n: 3 },
    ];
    const res = await call(app.url, 'POST', `/api/data_store/data/${db}/decimals/`, { token, body });
    const stored = await call(app.url, 'GET', `/api/data_store/data/${db}/decimals/?page_size=0`, { token });
    const storedIds = (stored.json.results as { _id: string }[]).map((r) => r._id).sort();
    expect(res.status, JSON.stringify(res.json)).toBeLessThan(500);
    const reported = res.status === 201 ? res.json.inserted_ids : res.json.error.detail.inserted_ids;
    expect([...reported].sort()).toEqual(storedIds);
  });
});
