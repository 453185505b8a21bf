/**
 * The local engine (FerretDB v2 on PostgreSQL + DocumentDB) has no authorization: it runs every
 * client's command on its own PostgreSQL connection. An outside probe used that to go, with
 * nothing but a worker's login, from `updateUser` on the engine's own PostgreSQL role to SQL as a
 * superuser on the cluster's TCP port, then to a program run as the cluster's OS user, which was
 * trusted on the private store's socket. Each link of that chain is checked here, on an engine
 * and a private store started as the installed service starts them:
 *
 * - no login can manage roles through the wire (create, change, drop, grant), whoever's;
 * - no role a client could learn or set a password of is a superuser or may create roles;
 * - the cluster has no TCP listener: a password gives no SQL to anyone on the host;
 * - the private store's cluster runs as an OS user of its own, trusts nobody, and the main
 *   cluster's OS user cannot even reach its socket.
 */
import { execFile } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { MongoClient, MongoServerError, type Document } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  PRIVATE_STORE_OS_USER,
  startMongoWire,
  startPrivateFerretDb,
  type MongoWireHandle,
} from '../../../src/local-services/mongo-wire.js';
import { keyMaterialPaths } from '../../../src/pki/files.js';
import { commandRefusal } from '../../support/command-refusal.js';
import { testServices } from '../../support/services.js';

const execFileAsync = promisify(execFile);
const PG_BIN = '/usr/lib/postgresql/15/bin';

const admin = { username: 'cybercom-admin', password: 'admin-password-0123456789' };
const api = { username: 'cybercom-api', password: 'api-password-0123456789' };
const worker = { username: 'cybercom-worker', password: 'worker-password-0123456789' };
const privateApi = { username: 'cybercom-api', password: 'private-api-password-0123456789' };
const ENGINE_ROLE = 'cybercom_engine';

let root: string;
let main: MongoWireHandle;
let store: MongoWireHandle;

function mainClient(login: { username: string; password: string }): MongoClient {
  const { certDir } = testServices();
  return new MongoClient(`mongodb://localhost:${main.port}/`, {
    tls: true,
    tlsCAFile: keyMaterialPaths(certDir, 'ca').certFile,
    tlsCertificateKeyFile: keyMaterialPaths(certDir, 'worker').combinedFile,
    directConnection: true,
    serverSelectionTimeoutMS: 10_000,
    auth: login,
    authSource: 'admin',
  });
}

async function using<T>(client: MongoClient, fn: (client: MongoClient) => Promise<T>): Promise<T> {
  try {
    return await fn(client);
  } finally {
    await client.close();
  }
}

/** Whether `login` can authenticate to the main engine and run a command. */
async function canLogIn(login: { username: string; password: string }): Promise<boolean> {
  return using(mainClient(login), async (client) => {
    try {
      await client.db('admin').command({ listCollections: 1, nameOnly: true });
      return true;
    } catch {
      return false;
    }
  });
}

/** Runs SQL with psql as an OS user on a socket directory; stdout, or the error's text. */
async function psqlAs(osUser: string, socketDir: string, port: string, role: string, sql: string): Promise<{ ok: boolean; out: string }> {
  try {
    const { stdout } = await execFileAsync(
      'setpriv',
      [
        `--reuid=${osUser}`,
        `--regid=${osUser}`,
        '--init-groups',
        '--',
        join(PG_BIN, 'psql'),
        '-X',
        '-tA',
        '-h',
        socketDir,
        '-p',
        port,
        '-U',
        role,
        '-d',
        'postgres',
        '-c',
        sql,
      ],
      { env: { ...process.env, PGCONNECT_TIMEOUT: '10', PGPASSWORD: 'not-the-password' }, timeout: 30_000 },
    );
    return { ok: true, out: stdout.trim() };
  } catch (err) {
    return { ok: false, out: (err as { stderr?: string }).stderr ?? String(err) };
  }
}

/** The socket directory and port FerretDB reaches its cluster on, from the URL it reads. */
async function clusterAddress(engineDir: string): Promise<{ socketDir: string; port: string }> {
  const url = (await readFile(join(engineDir, 'state', 'postgresql-url'), 'utf8')).trim();
  const query = new URLSearchParams(url.includes('?') ? url.slice(url.indexOf('?') + 1) : '');
  // An earlier version's URL named a TCP address (127.0.0.1 and the port) instead.
  const tcp = /@([^:/]+):(\d+)\//.exec(url);
  return { socketDir: query.get('host') ?? tcp?.[1] ?? '', port: query.get('port') ?? tcp?.[2] ?? '' };
}

/** The authentication methods of a cluster's pg_hba.conf, each once. */
async function hbaMethods(engineDir: string): Promise<string[]> {
  const hba = await readFile(join(engineDir, 'postgres', 'data', 'pg_hba.conf'), 'utf8');
  const lines = hba.split('\n').filter((line) => line.trim() !== '' && !line.trimStart().startsWith('#'));
  return [...new Set(lines.map((line) => line.trim().split(/\s+/)[3] ?? ''))];
}

beforeAll(async () => {
  const { certDir } = testServices();
  const server = keyMaterialPaths(certDir, 'server');
  // A short path: a cluster's Unix socket path must fit in 107 bytes.
  root = await mkdtemp(join(tmpdir(), 'cybercom-it-logins-'));
  await chmod(root, 0o755);
  [main, store] = await Promise.all([
    startMongoWire({
      dir: join(root, 'main'),
      caFile: keyMaterialPaths(certDir, 'ca').certFile,
      certFile: server.certFile,
      keyFile: server.keyFile,
      certKeyFile: server.combinedFile,
      clientCertKeyFile: keyMaterialPaths(certDir, 'api').combinedFile,
      ...admin,
      logins: [api, worker],
      kind: 'ferretdb',
    }),
    startPrivateFerretDb({ dir: join(root, 'private'), ...privateApi }),
  ]);
}, 180_000);

afterAll(async () => {
  await Promise.all([main?.stop(), store?.stop()]);
  if (root) await rm(root, { recursive: true, force: true });
});

describe('the workers login on the local engine', () => {
  const attempts: [string, Document][] = [
    ['set the engine role password', { updateUser: ENGINE_ROLE, pwd: 'taken-over-0123456789' }],
    ['set the API login password', { updateUser: api.username, pwd: 'taken-over-0123456789' }],
    ['set the bootstrap superuser password', { updateUser: 'postgres', pwd: 'taken-over-0123456789' }],
    ['set a DocumentDB role password', { updateUser: 'documentdb_bg_worker_role', pwd: 'taken-over-0123456789' }],
    ['set its own password', { updateUser: worker.username, pwd: 'taken-over-0123456789' }],
    [
      'create a user',
      {
        createUser: 'intruder',
        pwd: 'intruder-0123456789',
        roles: [
          { role: 'clusterAdmin', db: 'admin' },
          { role: 'readWriteAnyDatabase', db: 'admin' },
        ],
      },
    ],
    ['drop the API login', { dropUser: api.username }],
    ['drop the engine role', { dropUser: ENGINE_ROLE }],
    ['grant roles', { grantRolesToUser: worker.username, roles: ['root'] }],
    ['drop every user', { dropAllUsersFromDatabase: 1 }],
  ];

  it.each(attempts)('cannot %s', async (_what, command) => {
    const error = await using(mainClient(worker), (client) => commandRefusal(client, command));
    expect(error).toBeInstanceOf(MongoServerError);
  });

  it('leaves every login as it was after all those attempts', async () => {
    expect(await canLogIn(api)).toBe(true);
    expect(await canLogIn(worker)).toBe(true);
    expect(await canLogIn({ username: 'intruder', password: 'intruder-0123456789' })).toBe(false);
    expect(await canLogIn({ username: ENGINE_ROLE, password: 'taken-over-0123456789' })).toBe(false);
  });
});

describe("the main engine's cluster", () => {
  it('has no superuser and no role that may create roles but its bootstrap superuser', async () => {
    const { socketDir, port } = await clusterAddress(join(root, 'main'));
    const roles = await psqlAs(
      'postgres',
      socketDir,
      port,
      'postgres',
      'SELECT rolname FROM pg_roles WHERE rolsuper OR rolcreaterole ORDER BY 1',
    );
    expect(roles).toEqual({ ok: true, out: 'postgres' });
  });

  it('has no TCP listener, so no password gives SQL to anyone on this host', async () => {
    const { port } = await clusterAddress(join(root, 'main'));
    const tcp = await execFileAsync(
      join(PG_BIN, 'psql'),
      ['-X', '-h', '127.0.0.1', '-p', port, '-U', ENGINE_ROLE, '-d', 'postgres', '-c', 'SELECT 1'],
      {
        env: { ...process.env, PGCONNECT_TIMEOUT: '10', PGPASSWORD: 'any' },
        timeout: 30_000,
      },
    ).then(
      () => 'connected',
      (err: { stderr?: string }) => err.stderr ?? '',
    );
    expect(tcp).toMatch(/Connection refused/);
  });

  it('admits nobody by a password or on trust, and its front end role has no password', async () => {
    const { socketDir, port } = await clusterAddress(join(root, 'main'));
    expect(await hbaMethods(join(root, 'main'))).toEqual(['peer']);
    const withPassword = await psqlAs(
      'postgres',
      socketDir,
      port,
      'postgres',
      `SELECT count(*) FROM pg_authid WHERE rolname = '${ENGINE_ROLE}' AND rolpassword IS NOT NULL`,
    );
    expect(withPassword).toEqual({ ok: true, out: '0' });
  });
});

describe("the private store's cluster", () => {
  it('runs as an OS user of its own, not the main cluster user', async () => {
    const ids = async (user: string) => Number((await execFileAsync('id', ['-u', user])).stdout.trim());
    const owner = (await stat(join(root, 'private', 'postgres', 'data'))).uid;
    expect(owner).toBe(await ids(PRIVATE_STORE_OS_USER));
    expect(owner).not.toBe(await ids('postgres'));
    expect((await stat(join(root, 'main', 'postgres', 'data'))).uid).toBe(await ids('postgres'));
  });

  it('admits nobody by a password or on trust on its socket', async () => {
    expect(await hbaMethods(join(root, 'private'))).toEqual(['peer']);
  });

  it('cannot be reached by the main cluster OS user, as its bootstrap superuser or otherwise', async () => {
    const { socketDir, port } = await clusterAddress(join(root, 'private'));
    for (const role of ['postgres', ENGINE_ROLE]) {
      const attempt = await psqlAs('postgres', socketDir, port, role, 'SELECT 1');
      expect(attempt.ok, attempt.out).toBe(false);
      expect(attempt.out).toMatch(/Permission denied/);
    }
  });

  it('serves its own login', async () => {
    const client = new MongoClient(store.uri, {
      directConnection: true,
      auth: privateApi,
      authSource: 'admin',
      serverSelectionTimeoutMS: 10_000,
    });
    await using(client, async (c) => {
      await c.db('cybercom').collection('probe').insertOne({ ok: 1 });
      expect(await c.db('cybercom').collection('probe').countDocuments()).toBe(1);
    });
  });
});

/** The OS user a process runs as, from /proc. */
async function processUser(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]);
}

describe('the OS users each cluster admits', () => {
  const uid = async (user: string): Promise<number> => Number((await execFileAsync('id', ['-u', user])).stdout.trim());

  it('runs each front end as its cluster’s OS user', async () => {
    expect(await processUser(main.pid)).toBe(await uid('postgres'));
    expect(await processUser(store.pid)).toBe(await uid(PRIVATE_STORE_OS_USER));
  });

  it('maps no other OS user to a role, root included: another service’s process gets no SQL', async () => {
    for (const engine of ['main', 'private']) {
      const { socketDir, port } = await clusterAddress(join(root, engine));
      for (const role of ['postgres', ENGINE_ROLE]) {
        // Directly as root (this test process), the one user that can enter every socket directory.
        const attempt = await execFileAsync(
          join(PG_BIN, 'psql'),
          ['-X', '-w', '-tA', '-h', socketDir, '-p', port, '-U', role, '-d', 'postgres', '-c', 'SELECT current_user'],
          { env: { ...process.env, PGCONNECT_TIMEOUT: '10' }, timeout: 30_000 },
        ).then(
          ({ stdout }) => `connected as ${stdout.trim()}`,
          (err: { stderr?: string }) => err.stderr ?? '',
        );
        expect(attempt, `${engine} as ${role}`).toMatch(/Peer authentication failed/);
      }
      const ident = await readFile(join(root, engine, 'postgres', 'data', 'pg_ident.conf'), 'utf8');
      expect(ident).not.toMatch(/^\S+ root /m);
    }
  });
});

describe('a private store left by the previous version', () => {
  it('is taken over in place: its files become its own OS user’s, the engine role an ordinary one, nothing trusted', async () => {
    const dir = join(root, 'private');
    const { socketDir, port } = await clusterAddress(dir);
    // What the previous version left: a superuser engine role, trust on the socket, files of `postgres`.
    const promoted = await psqlAs(PRIVATE_STORE_OS_USER, socketDir, port, 'postgres', `ALTER ROLE ${ENGINE_ROLE} SUPERUSER`);
    expect(promoted.ok, promoted.out).toBe(true);
    await store.stop();
    const dataDir = join(dir, 'postgres', 'data');
    await execFileAsync('chown', ['-R', 'postgres:postgres', join(dir, 'postgres')]);
    await writeFile(join(dataDir, 'pg_hba.conf'), 'local all all trust\n');
    expect((await stat(join(dataDir, 'base'))).uid).toBe(Number((await execFileAsync('id', ['-u', 'postgres'])).stdout.trim()));

    store = await startPrivateFerretDb({ dir, ...privateApi });
    const storeUid = Number((await execFileAsync('id', ['-u', PRIVATE_STORE_OS_USER])).stdout.trim());
    for (const path of [dataDir, join(dataDir, 'base'), join(dataDir, 'PG_VERSION'), join(dataDir, 'global', 'pg_control')])
      expect((await stat(path)).uid, path).toBe(storeUid);
    expect(await hbaMethods(dir)).toEqual(['peer']);
    const after = await clusterAddress(dir);
    const superusers = await psqlAs(
      PRIVATE_STORE_OS_USER,
      after.socketDir,
      after.port,
      'postgres',
      'SELECT rolname FROM pg_roles WHERE rolsuper ORDER BY 1',
    );
    expect(superusers).toEqual({ ok: true, out: 'postgres' });
    const client = new MongoClient(store.uri, {
      directConnection: true,
      auth: privateApi,
      authSource: 'admin',
      serverSelectionTimeoutMS: 10_000,
    });
    await using(client, async (c) => expect(await c.db('cybercom').collection('probe').countDocuments()).toBe(1));
  }, 120_000);
});
