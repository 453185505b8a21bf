/**
 * The local runtime's database engine comes back by itself after its PostgreSQL postmaster is
 * killed (`kill -9`), again and again, while the API takes inserts: the supervisor restarts the
 * engine (FerretDB and the cluster under it), the API reconnects without a restart of its own,
 * and every insert the API acknowledged is in the database at the end. Every fourth kill also
 * leaves a child of the postmaster alive (pg_cron's launcher, held with SIGSTOP), as a crash was
 * seen to do: a restart must not depend on the children noticing that their postmaster died.
 *
 * The supervisor is the appliance's (`LocalSupervisor`), starting the engine through
 * startMongoWire as the installed database service does (without the appliance's own users), with
 * shorter waits between restarts than in production (whose back-off for a crash loop would spread
 * twenty kills over many minutes).
 */
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installLayout, type InstallLayout } from '../../../../src/installation/layout.js';
import { LocalSupervisor, type ServiceDefinition } from '../../../../src/installation/runner/local-supervisor.js';
import { readSupervisorStatus } from '../../../../src/installation/runner/supervisor-status.js';
import { keyMaterialPaths } from '../../../../src/pki/files.js';
import { startMongoWire } from '../../../../src/local-services/mongo-wire.js';
import { freePort } from '../../../../src/local-services/ports.js';
import { isProcessAlive } from '../../../../src/local-services/processes.js';
import { call, startTestApp, uniqueName, type TestApp } from '../../../support/app.js';
import { postmasterPid, waitForChild } from '../../../support/postgres-processes.js';
import { testServices } from '../../../support/services.js';

const KILLS = 20;
/** Every how many kills a child of the postmaster is held alive (SIGSTOP) across the kill. */
const ORPHAN_EVERY = 4;
const RECOVERY_LIMIT_MS = 60_000;
/** Concurrent clients inserting through the API. */
const INSERTERS = 3;
/** Inserts the API must have acknowledged since the last recovery before the next kill. */
const ACKS_BEFORE_KILL = 5;

const username = 'engine-admin';
const password = `pw-${randomBytes(12).toString('hex')}`;

let root: string;
let layout: InstallLayout;
let dataDir: string;
let port: number;
let supervisor: LocalSupervisor;
let supervised: Promise<number>;
let app: TestApp;
let token: string;
const database = uniqueName('crash');
const collection = 'readings';
/** Lines the engine logged about leftover processes it killed. */
const leftoverLog: string[] = [];
/** Children of a postmaster this test stopped (SIGSTOP) before killing it. */
const orphans: number[] = [];

function certs() {
  const { certDir } = testServices();
  return { ca: keyMaterialPaths(certDir, 'ca'), server: keyMaterialPaths(certDir, 'server'), api: keyMaterialPaths(certDir, 'api') };
}

function databaseService(): ServiceDefinition {
  const { ca, server, api } = certs();
  const dir = layout.databaseDir;
  return {
    name: 'database',
    logFile: join(dir, 'ferretdb.log'),
    port,
    start: () =>
      startMongoWire({
        dir,
        caFile: ca.certFile,
        certFile: server.certFile,
        keyFile: server.keyFile,
        certKeyFile: server.combinedFile,
        clientCertKeyFile: api.combinedFile,
        port,
        username,
        password,
        kind: 'ferretdb',
        log: (message) => leftoverLog.push(message),
      }),
  };
}

async function databaseStatus() {
  return (await readSupervisorStatus(layout.supervisorStatusFile))?.services.database;
}

beforeAll(async () => {
  // A short path: the cluster's Unix socket path must fit in 107 bytes.
  root = await mkdtemp(join(tmpdir(), 'cybercom-it-engine-'));
  await chmod(root, 0o755);
  layout = installLayout(root);
  await mkdir(layout.runDir, { recursive: true });
  // PostgreSQL runs as its own user and must be able to walk down to its directory.
  await mkdir(layout.dataDir, { recursive: true });
  await chmod(layout.dataDir, 0o755);
  dataDir = join(layout.databaseDir, 'postgres', 'data');
  port = await freePort();
  supervisor = new LocalSupervisor(layout, [databaseService()], { initialMs: 200, maxMs: 1_000, stableMs: 60_000 });
  supervised = supervisor.run();
  const deadline = Date.now() + 90_000;
  for (;;) {
    const status = await readSupervisorStatus(layout.supervisorStatusFile);
    if (status?.ready) break;
    if (status?.error !== undefined || Date.now() > deadline) {
      throw new Error(`the engine did not start: ${status?.error ?? JSON.stringify(status?.services.database)}`);
    }
    await sleep(200);
  }
  const { ca, api } = certs();
  app = await startTestApp({
    MONGO_URI: `mongodb://localhost:${port}/`,
    MONGO_USERNAME: username,
    MONGO_PASSWORD: password,
    MONGO_AUTH_SOURCE: 'admin',
    MONGO_TLS_CA_FILE: ca.certFile,
    MONGO_TLS_CERT_KEY_FILE: api.combinedFile,
  });
  await app.users.createUser({ username: 'root', password: 'pw-superuser-1', isSuperuser: true });
  token = await app.users.tokenFor('root');
  expect((await call(app.url, 'POST', '/api/data_store/data/', { token, body: { database } })).status).toBe(201);
  expect((await call(app.url, 'POST', `/api/data_store/data/${database}/`, { token, body: { collection } })).status).toBe(201);
}, 180_000);

afterAll(async () => {
  // A stopped child the engine failed to kill would stay stopped for good: let it go on, so it
  // sees that its postmaster is gone and exits.
  for (const pid of orphans) if (isProcessAlive(pid)) process.kill(pid, 'SIGCONT');
  await app?.close().catch(() => undefined);
  await supervisor?.stop();
  await supervised;
  if (root !== undefined && process.env.TEST_KEEP_STATE !== '1') await rm(root, { recursive: true, force: true });
});

/** Ids of the inserts the API answered 201; other answers by status ("error" when none came). */
const acknowledged: string[] = [];
const refused: Record<string, number> = {};
let slowestInsertMs = 0;

async function insertOne(n: number): Promise<void> {
  const id = `r-${n}-${randomBytes(4).toString('hex')}`;
  const t0 = Date.now();
  try {
    const response = await fetch(new URL(`/api/data_store/data/${database}/${collection}/`, app.url), {
      method: 'POST',
      headers: { authorization: `Token ${token}`, 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ _id: id, n, at: new Date().toISOString() }),
      signal: AbortSignal.timeout(30_000),
    });
    await response.arrayBuffer();
    if (response.status === 201) acknowledged.push(id);
    else refused[response.status] = (refused[response.status] ?? 0) + 1;
  } catch {
    refused.error = (refused.error ?? 0) + 1;
  } finally {
    slowestInsertMs = Math.max(slowestInsertMs, Date.now() - t0);
  }
}

/** Waits until the supervisor runs the engine again (a process other than `before`) and the API is healthy. */
async function waitForRecovery(before: number | undefined, killedAt: number): Promise<number> {
  for (;;) {
    const status = await databaseStatus();
    if (status?.state === 'running' && status.pid !== before) {
      const health = await call(app.url, 'GET', '/api/health/');
      if (health.status === 200) return Date.now() - killedAt;
    }
    if (Date.now() - killedAt > RECOVERY_LIMIT_MS) {
      throw new Error(
        `not recovered ${RECOVERY_LIMIT_MS} ms after the kill: database ${JSON.stringify(status)}, ` +
          `health ${JSON.stringify((await call(app.url, 'GET', '/api/health/')).json)}`,
      );
    }
    await sleep(100);
  }
}

describe('the database engine under repeated kill -9 of its postmaster', () => {
  it(`comes back by itself ${KILLS} times within ${RECOVERY_LIMIT_MS / 1000} s each, and no acknowledged insert is lost`, async () => {
    let loading = true;
    let sequence = 0;
    const inserters = Array.from({ length: INSERTERS }, async () => {
      while (loading) {
        const before = acknowledged.length;
        await insertOne(++sequence);
        // While the engine is down every insert fails: a pause instead of a busy loop.
        if (acknowledged.length === before) await sleep(100);
      }
    });

    const recoveryMs: number[] = [];
    try {
      for (let kill = 1; kill <= KILLS; kill++) {
        const acksBefore = acknowledged.length;
        const deadline = Date.now() + 30_000;
        while (acknowledged.length < acksBefore + ACKS_BEFORE_KILL) {
          if (Date.now() > deadline) throw new Error(`kill ${kill}: no inserts acknowledged (${JSON.stringify(refused)})`);
          await sleep(20);
        }
        const postmaster = await postmasterPid(dataDir);
        let orphan: number | undefined;
        if (kill % ORPHAN_EVERY === 0) {
          orphan = (await waitForChild(postmaster, /pg_cron launcher/)).pid;
          process.kill(orphan, 'SIGSTOP');
          orphans.push(orphan);
        }
        const front = (await databaseStatus())?.pid;
        const killedAt = Date.now();
        process.kill(postmaster, 'SIGKILL');
        recoveryMs.push(await waitForRecovery(front, killedAt));
        expect(await postmasterPid(dataDir)).not.toBe(postmaster);
        if (orphan !== undefined) {
          expect(isProcessAlive(orphan), `kill ${kill}: the stopped launcher ${orphan} outlived the restart`).toBe(false);
          expect(leftoverLog.some((line) => line.includes(`${orphan} (postgres: pg_cron launcher`))).toBe(true);
        }
      }
    } finally {
      loading = false;
      await Promise.all(inserters);
    }

    // Every insert the API acknowledged, read straight from the engine.
    const { ca, api } = certs();
    const client = new MongoClient(`mongodb://localhost:${port}/`, {
      tls: true,
      tlsCAFile: ca.certFile,
      tlsCertificateKeyFile: api.combinedFile,
      directConnection: true,
      auth: { username, password },
      authSource: 'admin',
    });
    let stored: Set<unknown>;
    try {
      const docs = await client
        .db(database)
        .collection(collection)
        .find({}, { projection: { _id: 1 } })
        .toArray();
      stored = new Set(docs.map((d) => d._id));
    } finally {
      await client.close();
    }
    const lost = acknowledged.filter((id) => !stored.has(id));
    const status = await databaseStatus();
    console.log(
      `[engine-crash-restart] ${JSON.stringify({ kills: KILLS, orphans: orphans.length, acknowledged: acknowledged.length, stored: stored.size, refused, slowestInsertMs, restarts: status?.restarts, recoveryMs })}`,
    );
    expect(recoveryMs).toHaveLength(KILLS);
    expect(status?.restarts).toBe(KILLS);
    expect(acknowledged.length).toBeGreaterThanOrEqual(KILLS * ACKS_BEFORE_KILL);
    expect(lost.slice(0, 10), `${lost.length} of ${acknowledged.length} acknowledged inserts are missing`).toEqual([]);
  }, 600_000);
});
