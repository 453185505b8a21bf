/**
 * The explorer on 100,000 records: the schema of a 1,000-record sample within a second, and the
 * table's first page, with its count, sorted by an indexed field, within a few seconds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApp, type TestApp } from '../../support/app.js';
import { insertFixture } from '../../support/explorer-fixture.js';

const RECORDS = 100_000;
let app: TestApp;
let token: string;
let db: string;
const col = 'readings';

beforeAll(async () => {
  app = await startTestApp();
  db = `${app.prefix}scale`;
  await app.users.createUser({ username: 'root', password: 'pw-root-12345', isSuperuser: true });
  token = await app.users.tokenFor('root');
  await insertFixture(app.url, token, db, col, RECORDS);
  expect((await call(app.url, 'POST', `/api/data_store/indexes/${db}/${col}/`, { token, body: { keys: { when: 1 } } })).status).toBe(201);
}, 600_000);

afterAll(async () => {
  if (app === undefined) return;
  await call(app.url, 'POST', '/api/data_store/data/', { token, body: { database: db, action: 'delete' } }).catch(() => undefined);
  await app.close();
});

async function timed(path: string): Promise<{ ms: number; text: string }> {
  // The second request is measured: the first may pay for the engine's cold caches.
  await call(app.url, 'GET', path, { token, accept: 'text/html' });
  const started = performance.now();
  const res = await call(app.url, 'GET', path, { token, accept: 'text/html' });
  expect(res.status).toBe(200);
  return { ms: performance.now() - started, text: res.text };
}

describe('the explorer on 100,000 records', () => {
  it('profiles a sample of 1,000 within a second', async () => {
    const { ms, text } = await timed(`/api/explore/data_store/${db}/${col}/?tab=schema`);
    expect(text).toContain('random sample of 1000 records');
    expect(ms).toBeLessThan(1_000);
  });

  it('shows the first page, counted, sorted by an indexed field, within a few seconds', async () => {
    const { ms, text } = await timed(`/api/explore/data_store/${db}/${col}/?sort=-when`);
    expect(text).toContain('of 100\u202f000 records');
    expect(ms).toBeLessThan(5_000);
  });
});
