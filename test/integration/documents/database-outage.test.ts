/**
 * A database outage seen by the API (the connection goes through a relay the test cuts):
 * requests get a clean 503 while it is down, and the API recovers without a restart. Then a
 * database that stops answering without closing anything (the relay frozen, as a paused engine
 * or a vanished host): requests beyond the connections already open wait for one the engine
 * never completes, and each is still answered by its deadline with a JSON error, never a 500.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApp, type TestApp } from '../../support/app.js';
import { TcpProxy, withPort } from '../../support/tcp-proxy.js';
import { testServices } from '../../support/services.js';

const OPERATION_TIMEOUT_MS = 3_000;
/** More requests at once than the driver opens connections at once (2), and than the idle pool holds. */
const CONCURRENT_REQUESTS = 12;

let app: TestApp;
let proxy: TcpProxy;
let token: string;

beforeAll(async () => {
  const services = testServices();
  proxy = await new TcpProxy(services.mongo.port).start();
  app = await startTestApp({
    MONGO_URI: withPort(services.env.MONGO_URI as string, proxy.port),
    // Short deadlines keep the frozen case brief; their relation (reads get longer) is the default one.
    MONGO_OPERATION_TIMEOUT_MS: String(OPERATION_TIMEOUT_MS),
    MONGO_QUERY_TIME_LIMIT_MS: '6000',
  });
  await app.users.createUser({ username: 'root', password: 'pw-superuser-1', isSuperuser: true });
  token = await app.users.tokenFor('root');
});

afterAll(async () => {
  await app?.close();
  await proxy?.close();
});

describe('database outage', () => {
  it('answers 503 with the JSON error body while the database is unreachable, then recovers', async () => {
    const db = `${app.prefix}outage`;
    expect((await call(app.url, 'POST', '/api/data_store/data/', { token, body: { database: db } })).status).toBe(201);
    proxy.cut(15_000);
    // Token lookups are cached for 2 s; wait past that so the request needs the database.
    await new Promise((r) => setTimeout(r, 2_500));
    const during = await call(app.url, 'GET', `/api/data_store/data/${db}/`, { token });
    expect(during.status).toBe(503);
    expect(during.json.error.code).toBe('database_unavailable');
    const health = await call(app.url, 'GET', '/api/health/');
    expect(health.status).toBe(503);
    expect(health.json.checks.database).toBe('unavailable');
    const deadline = Date.now() + 30_000;
    let status = 0;
    while (Date.now() < deadline) {
      status = (await call(app.url, 'GET', `/api/data_store/data/${db}/`, { token })).status;
      if (status === 200) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    expect(status).toBe(200);
  });

  it('answers every request by its deadline with a JSON error when the database stops answering', async () => {
    const db = `${app.prefix}frozen`;
    expect((await call(app.url, 'POST', '/api/data_store/data/', { token, body: { database: db } })).status).toBe(201);
    expect((await call(app.url, 'POST', `/api/data_store/data/${db}/`, { token, body: { collection: 'c' } })).status).toBe(201);
    expect((await call(app.url, 'POST', `/api/data_store/data/${db}/c/`, { token, body: { n: 1 } })).status).toBe(201);
    // Read once first: what the API caches about the collection, it then does not ask again, and
    // the reads below go straight to the query, bounded by the query time limit alone.
    expect((await call(app.url, 'GET', `/api/data_store/data/${db}/c/?page_size=5`, { token })).status).toBe(200);
    proxy.freeze();
    const started = Date.now();
    const answers = await Promise.all(
      Array.from({ length: CONCURRENT_REQUESTS }, (_, i) =>
        i % 2 === 0
          ? call(app.url, 'GET', `/api/data_store/data/${db}/c/?page_size=5`, { token })
          : call(app.url, 'POST', `/api/data_store/data/${db}/c/`, { token, body: { n: i } }),
      ),
    );
    const seen = answers.map((a) => `${a.status} ${a.json?.error?.code}`);
    for (const answer of answers) {
      expect([503, 504], seen.join(', ')).toContain(answer.status);
      expect(answer.json?.error?.code, seen.join(', ')).toMatch(/^(database_unavailable|query_timeout)$/);
    }
    // Answered by the deadlines (the query limit the longest), not by the client giving up.
    expect(Date.now() - started).toBeLessThan(20_000);
  }, 60_000);
});
