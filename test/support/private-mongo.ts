/**
 * A MongoDB-wire database of a test's own, which the test may kill and restart without
 * disturbing the suite's shared services: the local engine (FerretDB v2 on a private PostgreSQL
 * cluster, through startMongoWire), or a FerretDB v1 binary on SQLite when one is named (to
 * compare the previous engine's behaviour). Over TLS with the suite's CA and certificates, on a
 * port that stays the same across restarts, so the API's driver client reconnects by itself.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { MongoClient } from 'mongodb';
import { legacyFerretDbArgs } from '../../src/installation/database-migration.js';
import { keyMaterialPaths } from '../../src/pki/files.js';
import { freePort, waitForPort } from '../../src/local-services/ports.js';
import { startMongoWire, startPrivateFerretDb, type MongoWireHandle } from '../../src/local-services/mongo-wire.js';
import { spawnManaged, type ManagedProcess } from '../../src/local-services/processes.js';
import { postmasterPid } from './postgres-processes.js';

export type KillTarget = 'front' | 'storage';

export interface PrivateMongoOptions {
  dir: string;
  /** Directory of ca.pem, server.* and api.* (the suite's certificate set). */
  certDir: string;
  username: string;
  password: string;
  /** A FerretDB v1 binary: run it on SQLite instead of the local engine. */
  ferretDbV1Bin?: string;
}

export interface PrivateMongo {
  readonly engine: string;
  readonly port: number;
  /** MONGO_* settings of a service using this database with the `api` client certificate. */
  env(): Record<string, string>;
  /**
   * SIGKILLs the wire server ('front') or the storage under it ('storage': the PostgreSQL
   * postmaster; FerretDB v1 keeps SQLite in its own process, so this kills the front there too).
   */
  kill(target: KillTarget): Promise<void>;
  /** Sends `signal` to the same process as kill: SIGSTOP leaves it alive but silent, SIGCONT wakes it. */
  signal(target: KillTarget, signal: NodeJS.Signals): Promise<void>;
  /** Starts the database again on the same port and data; waits until it authenticates clients. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

const AUTH_SOURCE = 'admin';

function certs(certDir: string) {
  const ca = keyMaterialPaths(certDir, 'ca');
  const server = keyMaterialPaths(certDir, 'server');
  const api = keyMaterialPaths(certDir, 'api');
  return { ca, server, api };
}

/** Waits until a client with the test's credentials can log in and run a command. */
async function waitUntilServing(port: number, o: PrivateMongoOptions, timeoutMs: number): Promise<void> {
  const { ca, api } = certs(o.certDir);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const client = new MongoClient(`mongodb://localhost:${port}/`, {
      tls: true,
      tlsCAFile: ca.certFile,
      tlsCertificateKeyFile: api.combinedFile,
      directConnection: true,
      serverSelectionTimeoutMS: 2_000,
      connectTimeoutMS: 2_000,
      auth: { username: o.username, password: o.password },
      authSource: AUTH_SOURCE,
    });
    try {
      await client.db(AUTH_SOURCE).command({ listCollections: 1, nameOnly: true });
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await sleep(200);
    } finally {
      await client.close().catch(() => undefined);
    }
  }
}

function envFor(port: number, o: PrivateMongoOptions): Record<string, string> {
  const { ca, api } = certs(o.certDir);
  return {
    MONGO_URI: `mongodb://localhost:${port}/`,
    MONGO_USERNAME: o.username,
    MONGO_PASSWORD: o.password,
    MONGO_AUTH_SOURCE: AUTH_SOURCE,
    MONGO_TLS_CA_FILE: ca.certFile,
    MONGO_TLS_CERT_KEY_FILE: api.combinedFile,
  };
}

/** Signals the wire server ('front') or the postmaster of the cluster under it ('storage'; its pid is in postmaster.pid). */
async function signalEngine(handle: MongoWireHandle, dir: string, target: KillTarget, signal: NodeJS.Signals): Promise<void> {
  process.kill(target === 'front' ? handle.pid : await postmasterPid(join(dir, 'postgres', 'data')), signal);
}

/**
 * Starts a killed engine again. A killed postmaster leaves backends that exit on their own within
 * moments; until then a new postmaster refuses the data directory, so starting is retried briefly.
 */
async function startAgain(start: () => Promise<MongoWireHandle>): Promise<MongoWireHandle> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      return await start();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await sleep(500);
    }
  }
}

/** FerretDB v2 on PostgreSQL + DocumentDB, as the local runtime runs it. */
async function startLocalEngine(o: PrivateMongoOptions): Promise<PrivateMongo> {
  const { ca, server, api } = certs(o.certDir);
  const start = (port?: number) =>
    startMongoWire({
      dir: o.dir,
      caFile: ca.certFile,
      certFile: server.certFile,
      keyFile: server.keyFile,
      certKeyFile: server.combinedFile,
      clientCertKeyFile: api.combinedFile,
      username: o.username,
      password: o.password,
      kind: 'ferretdb',
      port,
    });
  let handle: MongoWireHandle = await start();
  const port = handle.port;
  return {
    engine: 'FerretDB v2 on PostgreSQL + DocumentDB',
    port,
    env: () => envFor(port, o),
    kill: (target) => signalEngine(handle, o.dir, target, 'SIGKILL'),
    signal: (target, signal) => signalEngine(handle, o.dir, target, signal),
    async restart() {
      // Whatever survived the kill (FerretDB without its storage, or the cluster without its
      // front) is stopped first: startMongoWire starts both on the same data and port.
      await handle.stop();
      handle = await startAgain(() => start(port));
    },
    stop: () => handle.stop(),
  };
}

/** FerretDB v1 on SQLite: the flags the local runtime used with that engine. */
async function startFerretDbV1(o: PrivateMongoOptions & { ferretDbV1Bin: string }): Promise<PrivateMongo> {
  const { ca, server } = certs(o.certDir);
  const port = await freePort();
  const args = legacyFerretDbArgs({
    dataDir: join(o.dir, 'data'),
    stateDir: join(o.dir, 'state'),
    port,
    certFile: server.certFile,
    keyFile: server.keyFile,
    clientCaFile: ca.certFile,
  });
  await mkdir(join(o.dir, 'data'), { recursive: true });
  await mkdir(join(o.dir, 'state'), { recursive: true });
  const env = { ...process.env, FERRETDB_SETUP_USERNAME: o.username, FERRETDB_SETUP_PASSWORD: o.password };
  const spawn = async (): Promise<ManagedProcess> => {
    const proc = await spawnManaged(o.ferretDbV1Bin, args, { logFile: join(o.dir, 'ferretdb-v1.log'), cwd: o.dir, env });
    await waitForPort('127.0.0.1', port, 30_000, { signal: proc.exitSignal });
    await waitUntilServing(port, o, 30_000);
    return proc;
  };
  let proc = await spawn();
  return {
    engine: 'FerretDB v1 on SQLite',
    port,
    env: () => envFor(port, o),
    async kill() {
      proc.signalGroup('SIGKILL');
      await proc.exited;
    },
    async signal(_target, signal) {
      proc.signalGroup(signal);
    },
    async restart() {
      await proc.terminate(5_000);
      proc = await spawn();
    },
    async stop() {
      await proc.terminate(5_000);
    },
  };
}

export async function startPrivateMongo(o: PrivateMongoOptions): Promise<PrivateMongo> {
  const v1 = o.ferretDbV1Bin;
  const db = v1 !== undefined && v1 !== '' ? await startFerretDbV1({ ...o, ferretDbV1Bin: v1 }) : await startLocalEngine(o);
  await waitUntilServing(db.port, o, 30_000);
  return db;
}

/** The private store's pieces a test kills: its FerretDB and its PostgreSQL cluster's postmaster. */
export interface PrivateStore {
  /** PRIVATE_MONGO_* settings of a service keeping its own data here. */
  env(): Record<string, string>;
  kill(target: KillTarget): Promise<void>;
  signal(target: KillTarget, signal: NodeJS.Signals): Promise<void>;
  /** Starts it again on the same socket and data; waits until it authenticates clients. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A private store of a test's own, as the local runtime runs it (startPrivateFerretDb: FerretDB
 * on its own PostgreSQL cluster, on a Unix socket). `dir` must be short: the socket's path must
 * fit in 107 bytes.
 */
export async function startPrivateStore(o: { dir: string; username: string; password: string }): Promise<PrivateStore> {
  const start = () => startPrivateFerretDb({ dir: o.dir, username: o.username, password: o.password });
  let handle = await start();
  return {
    env: () => ({
      PRIVATE_MONGO_URI: handle.uri,
      PRIVATE_MONGO_USERNAME: o.username,
      PRIVATE_MONGO_PASSWORD: o.password,
      PRIVATE_MONGO_AUTH_SOURCE: handle.authSource,
    }),
    kill: (target) => signalEngine(handle, o.dir, target, 'SIGKILL'),
    signal: (target, signal) => signalEngine(handle, o.dir, target, signal),
    async restart() {
      await handle.stop();
      handle = await startAgain(start);
    },
    stop: () => handle.stop(),
  };
}
