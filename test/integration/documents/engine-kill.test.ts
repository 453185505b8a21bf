/**
 * The engine's wire server (FerretDB) or the storage under it (the PostgreSQL postmaster) dies
 * by SIGKILL while the API serves: every request gets an answer, never a hang, and the answer to
 * one that needs the database is a 503 with the JSON error body, not a crash; once the engine
 * is started again the API serves as before without a restart of its own.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApp, uniqueName, type TestApp } from '../../support/app.js';
import { startPrivateMongo, type KillTarget, type PrivateMongo } from '../../support/private-mongo.js';
import { requestOnNewConnection } from '../../support/serve-process.js';
import { testServices } from '../../support/services.js';
import { until } from '../../support/until.js';

/** Longer than any answer should take with the engine gone: past it the request counts as hung. */
const ANSWER_LIMIT_MS = 20_000;

let db: PrivateMongo;
let app: TestApp;
let token: string;
const database = uniqueName('kill');
const collection = 'readings';

beforeAll(async () => {
  const services = testServices();
  db = await startPrivateMongo({
    dir: join(services.stateDir, uniqueName('engine-kill-')),
    certDir: services.certDir,
    username: 'enginekill',
    password: `pw-${uniqueName('')}-${uniqueName('')}`,
  });
  app = await startTestApp(db.env());
  await app.users.createUser({ username: 'root', password: 'pw-superuser-1', isSuperuser: true });
  token = await app.users.tokenFor('root');
  expect((await call(app.url, 'POST', '/api/data_store/data/', { token, body: { database } })).status).toBe(201);
  expect((await call(app.url, 'POST', `/api/data_store/data/${database}/`, { token, body: { collection } })).status).toBe(201);
}, 180_000);

afterAll(async () => {
  await app?.close();
  await db?.stop();
});

const path = `/api/data_store/data/${database}/${collection}/`;

function send(method: 'GET' | 'POST', url: string, body?: unknown) {
  return requestOnNewConnection(`${app.url}${url}`, {
    method,
    headers: { authorization: `Token ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    timeoutMs: ANSWER_LIMIT_MS,
  });
}

describe('the API while the engine is killed', () => {
  it.each(['front', 'storage'] as KillTarget[])(
    'answers 503 with the JSON error body when the %s is killed, and recovers',
    async (target) => {
      const before = await send('POST', path, { target, phase: 'before' });
      expect(before.status, before.text).toBe(201);

      await db.kill(target);
      // Past the account cache (2 s), so that every request needs the database.
      await sleep(2_500);
      const started = Date.now();
      const answers = await Promise.all([
        send('GET', path),
        send('POST', path, { target, phase: 'during' }),
        send('GET', `/api/data_store/data/${database}/`),
      ]);
      for (const answer of answers) {
        expect(answer.status, answer.text).toBe(503);
        expect(JSON.parse(answer.text).error.code, answer.text).toBe('database_unavailable');
      }
      const health = await requestOnNewConnection(`${app.url}/api/health/`, { timeoutMs: ANSWER_LIMIT_MS });
      expect(health.status).toBe(503);
      expect(JSON.parse(health.text).checks.database).toBe('unavailable');
      const answeredWithinMs = Date.now() - started;

      await db.restart();
      const after = await until(
        async () => {
          const r = await send('GET', path).catch(() => undefined);
          return r?.status === 200 ? r : undefined;
        },
        60_000,
        'the API to serve again after the engine restarted',
        500,
      );
      const phases = (JSON.parse(after.text).results as Array<{ target: string; phase: string }>)
        .filter((r) => r.target === target)
        .map((r) => r.phase);
      expect(phases).toContain('before');
      console.log(`[engine-kill] ${target}: answers with the engine gone within ${answeredWithinMs} ms`);
    },
    180_000,
  );
});
