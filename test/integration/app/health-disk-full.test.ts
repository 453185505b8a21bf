/**
 * A database whose disk is full: the database answers but cannot store anything. Writes must get
 * 503 (the caller did nothing wrong, and may retry later), and health must say the database is
 * degraded instead of ok. The database of this test runs on a small file system of its own
 * (tmpfs), which the test fills with a file and empties again.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { open, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApp, uniqueName, type TestApp } from '../../support/app.js';
import { startPrivateMongo, type PrivateMongo } from '../../support/private-mongo.js';
import { testServices } from '../../support/services.js';

const FS_SIZE = '320m';

let mountPoint: string;
let db: PrivateMongo | undefined;
let app: TestApp | undefined;
let token: string;
let database: string;
const filler = () => join(mountPoint, 'filler');

/** Writes zeros until the file system is full. */
async function fillDisk(): Promise<void> {
  const file = await open(filler(), 'w');
  const chunk = Buffer.alloc(1024 * 1024);
  try {
    for (;;) await file.write(chunk);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  } finally {
    await file.close();
  }
}

beforeAll(async () => {
  const services = testServices();
  mountPoint = join(services.stateDir, uniqueName('diskfull-'));
  mkdirSync(mountPoint, { recursive: true });
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${FS_SIZE},mode=0755`, 'tmpfs', mountPoint]);
  db = await startPrivateMongo({
    dir: join(mountPoint, 'engine'),
    certDir: services.certDir,
    username: 'diskfull',
    password: `pw-${uniqueName('')}-${uniqueName('')}`,
  });
  app = await startTestApp(db.env());
  await app.users.createUser({ username: 'root', password: 'pw-superuser-1', isSuperuser: true });
  token = await app.users.tokenFor('root');
  database = uniqueName('full');
  expect((await call(app.url, 'POST', '/api/data_store/data/', { token, body: { database } })).status).toBe(201);
  expect((await call(app.url, 'POST', `/api/data_store/data/${database}/`, { token, body: { collection: 'big' } })).status).toBe(201);
}, 120_000);

afterAll(async () => {
  await app?.close();
  await db?.stop();
  if (mountPoint !== undefined) {
    try {
      execFileSync('umount', ['-l', mountPoint]);
    } finally {
      rmSync(mountPoint, { recursive: true, force: true });
    }
  }
});

describe('a full disk under the database', () => {
  it('answers writes with 503 and health with "degraded", and recovers when space is freed', async () => {
    const url = `/api/data_store/data/${database}/big/`;
    const records = (n: number) => Array.from({ length: n }, (_, i) => ({ i, pad: `${i}-`.padEnd(4000, 'x') }));
    expect((await call(app!.url, 'POST', url, { token, body: records(10) })).status).toBe(201);
    expect((await call(app!.url, 'GET', '/api/health/')).json.checks.database).toBe('ok');

    await fillDisk();
    let write = await call(app!.url, 'POST', url, { token, body: records(2000) });
    expect(write.status, JSON.stringify(write.json)).toBe(503);
    expect(write.json.error.code).toBe('database_storage_full');
    const health = await call(app!.url, 'GET', '/api/health/');
    expect(health.status, JSON.stringify(health.json)).toBe(503);
    expect(health.json.status).toBe('degraded');
    expect(health.json.checks.database).toBe('degraded');
    // Reads are not asserted: PostgreSQL cannot start a new backend on a full disk ("could not
    // write init file"), so a read that needs a new engine connection fails too (with 503).

    // Once the API's cache of the collection has run out, the write checks the collection first,
    // on an engine connection PostgreSQL cannot start on this disk: still "storage full".
    await new Promise((r) => setTimeout(r, app!.ctx.settings.sharedCacheMs + 300));
    write = await call(app!.url, 'POST', url, { token, body: records(10) });
    expect(write.status, JSON.stringify(write.json)).toBe(503);
    expect(write.json.error.code, JSON.stringify(write.json)).toBe('database_storage_full');

    await rm(filler());
    const deadline = Date.now() + 30_000;
    for (;;) {
      write = await call(app!.url, 'POST', url, { token, body: records(10) });
      if (write.status === 201 || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 1_000));
    }
    expect(write.status).toBe(201);
    const after = await call(app!.url, 'GET', '/api/health/');
    expect(after.status).toBe(200);
    expect(after.json.checks.database).toBe('ok');
  }, 120_000);
});
