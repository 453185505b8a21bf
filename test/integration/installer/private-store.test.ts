/**
 * The local runtime's engine (FerretDB v2) has no authorization: any login may read and write any
 * database. The workers' login (the one every worker bundle carries) must still not reach the
 * service's own data (users, tokens, sessions, task history). A fresh installation keeps that data
 * in a private store the workers' login cannot open; an installation made by the previous version
 * (this repository at PREVIOUS_COMMIT, service data on the shared engine) has it moved there by
 * the upgrade, and what a worker writes on the shared engine afterwards never reaches the service.
 */
import { execFile } from 'node:child_process';
import { readFile, stat, symlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { MongoClient, MongoServerError } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuthModule } from '../../../src/auth/index.js';
import { loadSettings } from '../../../src/config/settings.js';
import { connectMongo } from '../../../src/db/mongo-client.js';
import { createLogger } from '../../../src/log/logger.js';
import { hostServiceEnv } from '../../../src/installation/env-files.js';
import { hostMongoClient } from '../../../src/installation/host-connections.js';
import { loadInstallConfig, type InstallConfig } from '../../../src/installation/install-config.js';
import { installLayout, type InstallLayout } from '../../../src/installation/layout.js';
import { hostPrivateMongoClient, isPrivateCollection } from '../../../src/installation/private-store.js';
import { readSecrets, type Secrets } from '../../../src/installation/secrets.js';
import { PRIVATE_STORE_OS_USER, privateSocketPath, unixSocketUri } from '../../../src/local-services/mongo-wire.js';
import { Browser } from '../auth/helpers.js';
import { commandRefusal } from '../../support/command-refusal.js';
import { ADMIN_PASSWORD, adminLogin, call, install, prepareInstall, REPO, runTool, type TestInstall } from './support.js';

const execFileAsync = promisify(execFile);

/** The last version that kept users, tokens, sessions and task history on the workers' engine. */
const PREVIOUS_COMMIT = 'a921560';
const LONG = 600_000;
const SERVICE_DATABASE = 'cybercom';
/** The users' collection (Django's name). */
const USERS = 'auth_user';
const LOW = { username: 'low', password: 'Low-Password-4711' };

interface Installation {
  layout: InstallLayout;
  config: InstallConfig;
  secrets: Secrets;
}

async function installation(dir: string): Promise<Installation> {
  const layout = installLayout(dir);
  // Partial for the previous version's installation: secrets added since appear with the upgrade.
  return { layout, config: await loadInstallConfig(layout.installConfigFile), secrets: (await readSecrets(layout.secretsFile)) as Secrets };
}

async function using<T>(client: MongoClient, fn: (client: MongoClient) => Promise<T>): Promise<T> {
  try {
    return await fn(client);
  } finally {
    await client.close();
  }
}

/** The workers' login exactly as a worker bundle carries it: user, password and client certificate. */
function asWorker<T>(inst: Installation, fn: (client: MongoClient) => Promise<T>): Promise<T> {
  return using(hostMongoClient(inst.layout, inst.config, inst.secrets, { who: 'worker', certificate: 'worker', timeoutMs: 10_000 }), fn);
}

function asPrivateStore<T>(inst: Installation, fn: (client: MongoClient) => Promise<T>): Promise<T> {
  return using(hostPrivateMongoClient(inst.layout, inst.secrets, 10_000), fn);
}

/** Every document in every database the workers' login can list that looks like the service's own data. */
async function serviceDataSeenByWorker(inst: Installation): Promise<string[]> {
  return asWorker(inst, async (client) => {
    const seen: string[] = [];
    const { databases } = await client.db('admin').admin().listDatabases({ nameOnly: true });
    for (const { name: dbName } of databases) {
      const db = client.db(dbName);
      for (const { name } of await db.listCollections({}, { nameOnly: true }).toArray()) {
        const found = await db
          .collection(name)
          .find({ $or: [{ username: { $in: ['admin', LOW.username] } }, { password: { $exists: true } }, { key_hash: { $exists: true } }] })
          .toArray();
        for (const doc of found) seen.push(`${dbName}.${name}: ${JSON.stringify(doc).slice(0, 120)}`);
        if (dbName === SERVICE_DATABASE && isPrivateCollection(name) && (await db.collection(name).countDocuments()) > 0) {
          seen.push(`${dbName}.${name} (${await db.collection(name).countDocuments()} documents)`);
        }
      }
    }
    return seen;
  });
}

/** The workers' login writes a superuser flag onto the low user, wherever its engine keeps users. */
async function forgeSuperuser(inst: Installation): Promise<void> {
  await asWorker(inst, async (client) => {
    await client
      .db(SERVICE_DATABASE)
      .collection(USERS)
      .updateOne({ username: LOW.username }, { $set: { is_superuser: true, is_staff: true } }, { upsert: true });
  });
}

/** Whether the low user may do what only a superuser may: create a data-store database. */
async function lowIsSuperuser(api: string): Promise<boolean> {
  const token = await adminLogin(api, LOW.password, LOW.username);
  const created = await call(api, '/api/data_store/data/', { method: 'POST', bearer: token, body: { database: `forged${Date.now()}` } });
  if (created.status !== 201 && created.status !== 403) throw new Error(`unexpected ${created.status}: ${created.text}`);
  return created.status === 201;
}

/** The shared engine's PostgreSQL port, from the URL FerretDB reads (a query parameter, or before the socket-only cluster the URL's port). */
async function sharedPostgresPort(inst: Installation): Promise<number> {
  const url = (await readFile(join(inst.layout.databaseDir, 'state', 'postgresql-url'), 'utf8')).trim();
  return Number(/[?&]port=(\d+)/.exec(url)?.[1] ?? /@[^:/]+:(\d+)\//.exec(url)?.[1]);
}

/** Runs `SELECT 1` on the shared engine's PostgreSQL cluster over TCP on its port, as the workers' login. */
async function workerSqlLogin(inst: Installation): Promise<{ ok: boolean; message: string }> {
  const port = await sharedPostgresPort(inst);
  try {
    const { stdout } = await execFileAsync(
      '/usr/lib/postgresql/15/bin/psql',
      ['-X', '-h', '127.0.0.1', '-p', String(port), '-U', 'cybercom-worker', '-d', 'postgres', '-tAc', 'SELECT 1'],
      { env: { ...process.env, PGPASSWORD: inst.secrets.DB_WORKER_PASSWORD, PGCONNECT_TIMEOUT: '10' }, timeout: 30_000 },
    );
    return { ok: true, message: stdout };
  } catch (err) {
    return { ok: false, message: (err as { stderr?: string }).stderr ?? (err as Error).message };
  }
}

/** Connecting to the private store's socket with the workers' login (or another): the error the engine gives. */
async function workerLoginToPrivateStore(inst: Installation, login?: { username: string; password: string }): Promise<unknown> {
  const client = new MongoClient(unixSocketUri(privateSocketPath(inst.layout.privateDatabaseDir)), {
    directConnection: true,
    auth: login ?? { username: 'cybercom-worker', password: inst.secrets.DB_WORKER_PASSWORD },
    authSource: 'admin',
    serverSelectionTimeoutMS: 5_000,
  });
  try {
    await client.db(SERVICE_DATABASE).collection(USERS).findOne({});
    return undefined;
  } catch (err) {
    return err;
  } finally {
    await client.close();
  }
}

async function expectWorkerLockedOut(inst: Installation): Promise<void> {
  // The service's own data is in the private store ...
  const own = await asPrivateStore(inst, async (client) =>
    (await client.db(SERVICE_DATABASE).listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name),
  );
  expect(own).toEqual(expect.arrayContaining([USERS, 'authtoken_token', 'sessions', 'task_log']));
  // ... which the workers' login cannot open: the engine does not know that login at all.
  const refused = await workerLoginToPrivateStore(inst);
  expect(refused).toBeInstanceOf(MongoServerError);
  expect((refused as MongoServerError).code).toBe(18); // AuthenticationFailed
  // Nothing of it is left where the workers' login reaches.
  expect(await serviceDataSeenByWorker(inst)).toEqual([]);
  // Nor does that login get SQL on the shared engine's cluster: it has no TCP listener at all.
  const sql = await workerSqlLogin(inst);
  expect(sql.ok, sql.message).toBe(false);
  expect(sql.message).toMatch(/Connection refused/);
  // Nor may it manage any role through the engine (the probe set the engine role's password).
  for (const command of [
    { updateUser: 'cybercom_engine', pwd: 'taken-over-0123456789' },
    { updateUser: 'cybercom-api', pwd: 'taken-over-0123456789' },
    {
      createUser: 'intruder',
      pwd: 'intruder-0123456789',
      roles: [
        { role: 'clusterAdmin', db: 'admin' },
        { role: 'readWriteAnyDatabase', db: 'admin' },
      ],
    },
    { dropUser: 'cybercom-api' },
  ]) {
    const refused = await asWorker(inst, (client) => commandRefusal(client, command));
    expect(refused, JSON.stringify(command)).toBeInstanceOf(MongoServerError);
  }
  // The private store's cluster is another OS user's, and the API's main-engine password does not open it.
  const owner = (await stat(join(inst.layout.privateDatabaseDir, 'postgres', 'data'))).uid;
  expect(owner).toBe(Number((await execFileAsync('id', ['-u', PRIVATE_STORE_OS_USER])).stdout.trim()));
  const withMainPassword = await workerLoginToPrivateStore(inst, { username: 'cybercom-api', password: inst.secrets.DB_API_PASSWORD });
  expect(withMainPassword).toBeInstanceOf(MongoServerError);
  // A superuser flag written with it does not make anyone a superuser.
  await forgeSuperuser(inst);
  expect(await lowIsSuperuser(apiOf(inst))).toBe(false);
}

function apiOf(inst: Installation): string {
  return `http://localhost:${inst.config.ports.http}`;
}

/**
 * The low user, made with the API's own auth module (as the installer makes the administrator) in
 * the store that holds users: the private store, or for the previous version the shared engine.
 */
async function createLowUser(inst: Installation, store: 'private' | 'shared'): Promise<void> {
  const env = hostServiceEnv(inst.layout, inst.config, inst.secrets);
  // The previous version had no private store (nor its password): the shared engine's settings only.
  const settings = loadSettings(
    store === 'shared' ? Object.fromEntries(Object.entries(env).filter(([key]) => !key.startsWith('PRIVATE_MONGO_'))) : env,
  );
  const mongo = await connectMongo(store === 'private' ? settings.privateMongo : settings.mongo);
  try {
    const auth = await createAuthModule({ settings, logger: createLogger('warn', 'test'), mongo, db: mongo.db(SERVICE_DATABASE) });
    try {
      await auth.users.createUser({ username: LOW.username, password: LOW.password });
    } finally {
      await auth.close();
    }
  } finally {
    await mongo.close();
  }
}

/** A fresh installation of this version. */
async function setUpFresh(): Promise<Installation> {
  freshTarget = await prepareInstall('private');
  await install(freshTarget);
  return installation(freshTarget.dir);
}

interface PreviousVersion {
  target: TestInstall;
  inst: Installation;
  apiToken: string;
  taskId: string;
  lowSession: Browser;
}

/**
 * An installation made by the previous version, with the low user, the administrator's API token,
 * the low user's browser session and a finished task in its history.
 */
async function setUpPrevious(): Promise<PreviousVersion> {
  previousTarget = await prepareInstall('private-upgrade');
  const target = previousTarget;
  const previous = join(dirname(target.dir), 'previous-version');
  await execFileAsync('bash', [
    '-c',
    'mkdir -p "$3" && git -C "$1" archive "$2" | tar -x -C "$3"',
    'archive',
    REPO,
    PREVIOUS_COMMIT,
    previous,
  ]);
  // Its dependencies and engine build are this checkout's (the same versions).
  await symlink(join(REPO, 'node_modules'), join(previous, 'node_modules'));
  await symlink(join(REPO, '.cache'), join(previous, '.cache'));
  const old = await runTool('installer', ['--yes', ...target.args()], {}, LONG, previous);
  if (old.code !== 0) throw new Error(`the previous version's installer exited ${old.code}:\n${old.output.slice(-6000)}`);
  const inst = await installation(target.dir);

  const api = apiOf(inst);
  await createLowUser(inst, 'shared');
  const session = new Browser(api);
  await session.loginJson('admin', ADMIN_PASSWORD);
  const apiToken = (await session.get('/api/user/')).json.authentication['auth-token'] as string;
  // The low user's browser session (the installer's re-run sets the administrator's password
  // again, which ends the administrator's sessions by design).
  const lowSession = new Browser(api);
  await lowSession.loginJson(LOW.username, LOW.password);
  const run = await call(api, '/api/queue/run/tasks.add/?wait=60', {
    method: 'POST',
    token: apiToken,
    body: { function: 'tasks.add', queue: 'celery', args: [2, 3], kwargs: {}, tags: ['before-upgrade'] },
  });
  if (run.status !== 200) throw new Error(`task failed: ${run.status} ${run.text}`);
  return { target, inst, apiToken, taskId: run.json.task_id as string, lowSession };
}

let freshTarget: TestInstall | undefined;
let previousTarget: TestInstall | undefined;
let freshReady: Promise<Installation>;
let previousReady: Promise<PreviousVersion>;

// The two installations share nothing (own directories, ports and processes) and most of an
// install is waiting for services to come up: both are made side by side from the start, each
// describe block waiting for its own. A failure is reported by the block that waits for it.
beforeAll(() => {
  freshReady = setUpFresh();
  previousReady = setUpPrevious();
  // Marked handled here; the describe block's beforeAll still fails with the error.
  freshReady.catch(() => undefined);
  previousReady.catch(() => undefined);
});

afterAll(async () => {
  await Promise.allSettled([freshReady, previousReady]);
  await Promise.all([freshTarget?.cleanup(), previousTarget?.cleanup()]);
}, LONG);

describe('a fresh local installation', () => {
  let inst: Installation;

  beforeAll(async () => {
    inst = await freshReady;
  }, LONG);

  it('serves logins, tokens, sessions and task history from the private store, and the worker writes its results', async () => {
    const api = apiOf(inst);
    const jwt = await adminLogin(api);
    const session = new Browser(api);
    await session.loginJson('admin', ADMIN_PASSWORD);
    const profile = await session.get('/api/user/');
    expect(profile.status, profile.text).toBe(200);
    const apiToken = profile.json.authentication['auth-token'] as string;
    expect(apiToken).toMatch(/^[0-9a-f]{40}$/);

    expect((await call(api, '/api/data_store/data/', { method: 'POST', token: apiToken, body: { database: 'split' } })).status).toBe(201);
    expect((await call(api, '/api/data_store/data/split/', { method: 'POST', bearer: jwt, body: { collection: 'records' } })).status).toBe(
      201,
    );
    const run = await call(api, '/api/queue/run/tasks.write_record/?wait=60', {
      method: 'POST',
      token: apiToken,
      body: {
        function: 'tasks.write_record',
        queue: 'celery',
        args: [],
        kwargs: { database: 'split', collection: 'records', record: { station: 'Ada' } },
        tags: ['split'],
      },
    });
    expect(run.status, run.text).toBe(200);
    expect(run.json.status).toBe('SUCCESS');
    const record = await call(api, `/api/data_store/data/split/records/${run.json.result as string}/`, { token: apiToken });
    expect(record.json).toMatchObject({ station: 'Ada' });
    const history = await call(api, '/api/queue/usertasks/', { token: apiToken });
    expect(history.json.results).toEqual([expect.objectContaining({ task_id: run.json.task_id, status: 'SUCCESS', tags: ['split'] })]);

    // Results and records on the workers' engine, history on the private store.
    const results = await asWorker(inst, (c) => c.db(SERVICE_DATABASE).collection('tombstone').countDocuments({ _id: run.json.task_id }));
    expect(results).toBe(1);
    const logged = await asPrivateStore(inst, (c) =>
      c.db(SERVICE_DATABASE).collection('task_log').countDocuments({ task_id: run.json.task_id }),
    );
    expect(logged).toBe(1);
  }, 120_000);

  it('keeps every collection of the service data out of the workers’ login’s reach', async () => {
    await createLowUser(inst, 'private');
    await expectWorkerLockedOut(inst);
  }, 120_000);
});

describe('an installation made by the previous version (service data on the shared engine)', () => {
  let target: TestInstall;
  let inst: Installation;
  let apiToken: string;
  let taskId: string;
  let lowSession: Browser;

  beforeAll(async () => {
    ({ target, inst, apiToken, taskId, lowSession } = await previousReady);
  }, LONG);

  it(
    'starts out where the workers’ login reads hashes and tokens, gets SQL, and makes superusers (the layout being replaced)',
    async () => {
      const seen = await serviceDataSeenByWorker(inst);
      expect(seen.some((line) => line.startsWith(`${SERVICE_DATABASE}.${USERS}:`))).toBe(true);
      expect(seen.some((line) => line.startsWith(`${SERVICE_DATABASE}.authtoken_token:`))).toBe(true);
      expect((await workerSqlLogin(inst)).ok).toBe(true);
      await forgeSuperuser(inst);
      expect(await lowIsSuperuser(apiOf(inst))).toBe(true);
      // Undone, so that what follows starts from an honest low user.
      await asWorker(inst, (c) =>
        c
          .db(SERVICE_DATABASE)
          .collection(USERS)
          .updateOne({ username: LOW.username }, { $set: { is_superuser: false, is_staff: false } }),
      );
      // The API keeps an account for up to 2 s: the undone flag is seen once that has passed.
      const deadline = Date.now() + 15_000;
      while ((await lowIsSuperuser(apiOf(inst))) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 500));
      expect(await lowIsSuperuser(apiOf(inst))).toBe(false);
    },
    LONG,
  );

  it(
    'moves it into the private store on upgrade: logins, tokens, sessions and history keep working',
    async () => {
      const upgrade = await runTool('installer', ['--yes', ...target.args()], {}, LONG);
      expect(upgrade.code, upgrade.output.slice(-6000)).toBe(0);
      inst = await installation(target.dir);
      expect(inst.secrets.DB_PRIVATE_API_PASSWORD).toMatch(/^[\w-]{32}$/);
      const api = apiOf(inst);
      const history = await call(api, '/api/queue/usertasks/', { token: apiToken });
      expect(history.status, history.text).toBe(200);
      expect(history.json.results).toEqual([expect.objectContaining({ task_id: taskId, status: 'SUCCESS', tags: ['before-upgrade'] })]);
      const profile = await lowSession.get('/api/user/');
      expect(profile.status, profile.text).toBe(200);
      expect(profile.json.username).toBe(LOW.username);
      expect(await adminLogin(api, LOW.password, LOW.username)).toMatch(/^ey/);
      const result = await call(api, `/api/queue/task/${taskId}/`, { token: apiToken });
      expect(result.status, result.text).toBe(200);
      expect(result.json.result).toBe(5);
      await expectWorkerLockedOut(inst);
    },
    LONG,
  );

  it(
    'never reads the shared engine again: a re-run after the workers’ login wrote users there changes nothing',
    async () => {
      await forgeSuperuser(inst);
      const rerun = await runTool('installer', ['--yes', ...target.args()], {}, LONG);
      expect(rerun.code, rerun.output.slice(-6000)).toBe(0);
      expect(await lowIsSuperuser(apiOf(inst))).toBe(false);
      const users = await asPrivateStore(inst, (c) => c.db(SERVICE_DATABASE).collection(USERS).find({ username: LOW.username }).toArray());
      expect(users).toEqual([expect.objectContaining({ username: LOW.username, is_superuser: false })]);
    },
    LONG,
  );
});
