/**
 * A database outage seen by the API (the connection goes through a relay the test cuts):
 * requests get a clean 503 while it is down, and the API recovers without a restart.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApp, type TestApp } from '../../support/app.js';
import { TcpProxy, withPort } from '../../support/tcp-proxy.js';
import { testServices } from '../../support/services.js';

let app: TestApp;
let proxy: TcpProxy;
let token: string;

beforeAll(async () => {
  const services = testServices();
  proxy = await new TcpProxy(services.mongo.port).start();
  app = await startTestApp({ MONGO_URI: withPort(services.env.MONGO_URI as string, proxy.port) });
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
});
