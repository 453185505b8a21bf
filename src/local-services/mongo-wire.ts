/**
 * A MongoDB-wire server reachable only over TLS with a client certificate and SCRAM credentials.
 * `mongod` when installed (production parity); otherwise FerretDB v2 on a private PostgreSQL
 * cluster with the DocumentDB extension (ops/build-engine.sh builds both), which is what these
 * machines have (Debian packages no MongoDB server). Either way, the health check is a real driver
 * connection with the client certificate that authenticates and runs `ping`.
 */
import { chmod, chown, copyFile, mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { existsSync } from 'node:fs';
import { MongoClient, MongoServerError } from 'mongodb';
import { freePort, waitForPort } from './ports.js';
import { startPostgres, type PostgresHandle, type RoleLogin } from './postgres.js';
import { findExecutable, retryUntilReady, spawnManaged, startupError, type ManagedProcess, type ServerHandle } from './processes.js';
import { assertTraversable, commandAs, groupId, handOver, handOverTree, type RunAs } from './service-user.js';

export type MongoWireKind = 'mongod' | 'ferretdb';

export interface MongoWireOptions {
  /** Working directory of this server (data, state, log). */
  dir: string;
  /** The CA that signed the server certificate (trusted by this module's own set-up client). */
  caFile: string;
  /**
   * The CA client certificates must chain to (default: caFile). The appliance passes its client
   * CA here, which it replaces at every rotation, so that old client certificates are refused.
   */
  clientCaFile?: string;
  /** Server certificate, key, and certificate+key combined (for mongod). */
  certFile: string;
  keyFile: string;
  certKeyFile: string;
  /** Client certificate+key (combined) issued by the same CA, used for set-up and the health check. */
  clientCertKeyFile: string;
  port?: number;
  username: string;
  password: string;
  /** Force one implementation; default: mongod if on PATH, else FerretDB. */
  kind?: MongoWireKind;
  /** Listen address; default 127.0.0.1. '0.0.0.0' listens on every interface (remote workers). */
  bindHost?: string;
  startTimeoutMs?: number;
  /**
   * How often expired documents of TTL indexes are deleted, in seconds (1-59); default the
   * server's own interval (a minute for both servers). Tests of TTL indexes shorten it.
   */
  ttlIntervalSeconds?: number;
  /** Told about processes of the storage engine that were killed as leftovers (see postgres.ts). */
  log?: (message: string) => void;
  /**
   * FerretDB only: more logins (the API's, the workers'), created or given these passwords at
   * every start as the administrator is. Role management through the wire is off on this engine
   * (see postgres.ts); on mongod the installer manages its users with role commands instead.
   */
  logins?: readonly Login[];
}

export interface MongoWireHandle extends ServerHandle {
  kind: MongoWireKind;
  /** mongodb://localhost:<port>/, without credentials. */
  uri: string;
  /** The database the user is defined in. */
  authSource: string;
}

/** Users live in `admin` for both servers, as with MongoDB's root users. */
const AUTH_SOURCE = 'admin';

/** .cache/bin/ferretdb of the repository, found from this module whether run from src/ or dist/. */
function repositoryFerretDb(): string | undefined {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, '.cache', 'bin', 'ferretdb');
    if (existsSync(candidate)) return candidate;
    if (dir === dirname(dir)) return undefined;
    dir = dirname(dir);
  }
}

function chooseServer(kind: MongoWireKind | undefined): { kind: MongoWireKind; command: string } {
  const mongod = kind === 'ferretdb' ? undefined : findExecutable('mongod');
  if (mongod) return { kind: 'mongod', command: mongod };
  if (kind === 'mongod') throw new Error('mongod is not on PATH');
  const ferretdb = process.env.FERRETDB_BIN ?? repositoryFerretDb() ?? findExecutable('ferretdb');
  if (!ferretdb) {
    throw new Error('neither mongod nor FerretDB found: run `npm run prepare-test-env` to build .cache/bin/ferretdb');
  }
  return { kind: 'ferretdb', command: ferretdb };
}

function mongodArgs(o: MongoWireOptions, port: number, dbPath: string): string[] {
  return [
    '--dbpath',
    dbPath,
    '--bind_ip',
    o.bindHost ?? '127.0.0.1',
    '--port',
    String(port),
    '--auth',
    '--tlsMode',
    'requireTLS',
    '--tlsCertificateKeyFile',
    o.certKeyFile,
    // A CA file and no --tlsAllowConnectionsWithoutCertificates: client certificates are required.
    '--tlsCAFile',
    o.caFile,
    // Incoming client certificates are verified against the cluster CA file when one is given.
    ...(o.clientCaFile ? ['--tlsClusterCAFile', o.clientCaFile] : []),
    '--tlsDisabledProtocols',
    'TLS1_0,TLS1_1',
    // Keep the Unix socket (and its file) out of /tmp, which parallel instances share.
    '--unixSocketPrefix',
    dirname(dbPath),
    ...(o.ttlIntervalSeconds === undefined ? [] : ['--setParameter', `ttlMonitorSleepSecs=${o.ttlIntervalSeconds}`]),
  ];
}

/** host:port as Go's net.Listen wants it (IPv6 literals in brackets). */
function hostPort(host: string, port: number): string {
  const bare = host.replace(/^\[|\]$/g, '');
  return bare.includes(':') ? `[${bare}]:${port}` : `${bare}:${port}`;
}

function ferretDbArgs(o: MongoWireOptions, port: number, dir: string, urlFile: string): string[] {
  return [
    // The PostgreSQL URL carries a password: a 0600 file, not argv (public in `ps`) or the environment.
    `--postgresql-url-file=${urlFile}`,
    `--state-dir=${join(dir, 'state')}`,
    // An empty TCP address disables the plaintext listener: TLS only.
    '--listen-addr=',
    `--listen-tls=${hostPort(o.bindHost ?? '127.0.0.1', port)}`,
    `--listen-tls-cert-file=${o.certFile}`,
    `--listen-tls-key-file=${o.keyFile}`,
    // With a CA file FerretDB requires and verifies client certificates (tls.RequireAndVerifyClientCert).
    `--listen-tls-ca-file=${o.clientCaFile ?? o.caFile}`,
    // SCRAM authentication is on by default in v2; users are the cluster's (createUser).
    '--telemetry=disable',
    // '-' turns off the debug HTTP listener (default 127.0.0.1:8088), which would collide between instances.
    '--debug-addr=-',
    '--log-level=info',
    '--log-format=text',
  ];
}

/** How this module's own set-up client reaches the server: TCP with TLS, or a Unix socket. */
type Endpoint = { port: number; caFile: string; clientCertKeyFile: string } | { socket: string };

/** The driver's address of a Unix socket: the path, percent-encoded, as the host. */
export function unixSocketUri(socket: string): string {
  return `mongodb://${encodeURIComponent(socket)}/`;
}

function client(endpoint: Endpoint, auth?: { username: string; password: string }): MongoClient {
  const timeouts = { directConnection: true, serverSelectionTimeoutMS: 3000, connectTimeoutMS: 3000 };
  const login = auth ? { auth, authSource: AUTH_SOURCE } : {};
  if ('socket' in endpoint) return new MongoClient(unixSocketUri(endpoint.socket), { ...timeouts, ...login });
  return new MongoClient(`mongodb://localhost:${endpoint.port}/`, {
    tls: true,
    tlsCAFile: endpoint.caFile,
    tlsCertificateKeyFile: endpoint.clientCertKeyFile,
    ...timeouts,
    ...login,
  });
}

function tlsEndpoint(o: MongoWireOptions, port: number): Endpoint {
  return { port, caFile: o.caFile, clientCertKeyFile: o.clientCertKeyFile };
}

/**
 * mongod has no "setup user" flag: create the first user through the localhost exception (allowed
 * while no user exists). On a data directory that already has users, this is refused and the
 * existing user is used.
 */
async function ensureMongodUser(o: MongoWireOptions, port: number): Promise<void> {
  const c = client(tlsEndpoint(o, port));
  try {
    await c.db(AUTH_SOURCE).command({ createUser: o.username, pwd: o.password, roles: [{ role: 'root', db: AUTH_SOURCE }] });
  } catch (err) {
    // 13 Unauthorized: the localhost exception is closed because a user exists already.
    // 51003 "User already exists".
    if (!(err instanceof MongoServerError && (err.code === 13 || err.code === 51003))) throw err;
  } finally {
    await c.close();
  }
}

/** FerretDB's own login to PostgreSQL: internal, never given to a client. */
const ENGINE_ROLE = 'cybercom_engine';
/**
 * The OS user of the private store's cluster: not the main cluster's (`postgres`), so that a
 * compromised main cluster cannot even enter the private one's directory.
 */
export const PRIVATE_STORE_OS_USER = 'cybercom-store';

async function pingWithCredentials(endpoint: Endpoint, user: Login): Promise<void> {
  const c = client(endpoint, user);
  try {
    await c.connect();
    // `ping` needs no privileges; listCollections on authSource proves the login really happened.
    await c.db(AUTH_SOURCE).command({ ping: 1 });
    await c.db(AUTH_SOURCE).command({ listCollections: 1, nameOnly: true });
  } finally {
    await c.close();
  }
}

/** A login of the front end's clients: a role of its cluster (see postgres.ts). */
export type Login = RoleLogin;

/** FerretDB's storage: the PostgreSQL cluster in <dir>/postgres and the URL file FerretDB reads. */
interface FerretDbStorage {
  postgres: PostgresHandle;
  urlFile: string;
}

interface StorageOptions {
  timeoutMs: number;
  /** Every login of the front end's clients: the administrator first. */
  logins: readonly Login[];
  serviceUser?: string;
  log?: (message: string) => void;
  ttlIntervalSeconds?: number;
}

async function startFerretDbStorage(dir: string, o: StorageOptions): Promise<FerretDbStorage> {
  await mkdir(join(dir, 'state'), { recursive: true, mode: 0o700 });
  // PostgreSQL runs as its own user and must pass through; everything inside is protected by
  // its own mode (state/ 0700, postgres/ 0700 and owned by that user).
  await chmod(dir, 0o711);
  const postgres = await startPostgres({
    dir: join(dir, 'postgres'),
    role: ENGINE_ROLE,
    logins: o.logins,
    serviceUser: o.serviceUser,
    startTimeoutMs: o.timeoutMs,
    ttlIntervalSeconds: o.ttlIntervalSeconds,
    log: o.log,
  });
  const urlFile = join(dir, 'state', 'postgresql-url');
  await writeFile(urlFile, `${postgres.url}\n`, { mode: 0o600 });
  // FerretDB runs as the cluster's OS user (the only one its peer map admits): its state is theirs.
  // An earlier version ran it as root: its files there become this user's too.
  await handOverTree(postgres.runAs, join(dir, 'state'));
  await handOver(postgres.runAs, [urlFile]);
  return { postgres, urlFile };
}

/**
 * FerretDB as the cluster's OS user, with that user's environment. The binary may lie in a
 * checkout that user cannot enter: say so plainly rather than with setpriv's "permission denied".
 */
async function spawnFrontEnd(
  storage: FerretDbStorage,
  command: string,
  args: string[],
  logFile: string,
  cwd: string,
): Promise<ManagedProcess> {
  const { runAs } = storage.postgres;
  await assertTraversable(runAs, command, runAs.env.USER ?? 'the database');
  const [program, programArgs] = commandAs(runAs, command, args);
  return spawnManaged(program, programArgs, { logFile, cwd, env: { ...process.env, ...runAs.env } });
}

/**
 * The TLS files FerretDB reads, as copies its OS user owns (0600, in its 0700 state directory),
 * rewritten at every start so that a rotation takes effect on restart: the originals stay
 * readable by root only. Unchanged paths when no other user is involved.
 */
async function frontEndTlsFiles(runAs: RunAs, dir: string, o: MongoWireOptions): Promise<MongoWireOptions> {
  if (!runAs.owner) return o;
  const tlsDir = join(dir, 'state', 'tls');
  await mkdir(tlsDir, { recursive: true, mode: 0o700 });
  const copies = { certFile: join(tlsDir, 'server.pem'), keyFile: join(tlsDir, 'server.key'), clientCaFile: join(tlsDir, 'client-ca.pem') };
  await copyFile(o.certFile, copies.certFile);
  await copyFile(o.keyFile, copies.keyFile);
  await copyFile(o.clientCaFile ?? o.caFile, copies.clientCaFile);
  await Promise.all(Object.values(copies).map((file) => chmod(file, 0o600)));
  await handOver(runAs, [tlsDir, ...Object.values(copies)]);
  return { ...o, ...copies };
}

const LOG_ERRORS = /level=(ERROR|FATAL|DPANIC|PANIC)|"s":"[EF]"|^panic:/;

export async function startMongoWire(opts: MongoWireOptions): Promise<MongoWireHandle> {
  const { kind, command } = chooseServer(opts.kind);
  const dir = resolve(opts.dir);
  const port = opts.port ?? (await freePort());
  const timeoutMs = opts.startTimeoutMs ?? 60_000;
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const logFile = join(dir, `${kind}.log`);
  const endpoint = tlsEndpoint(opts, port);
  const user = { username: opts.username, password: opts.password };

  const started = Date.now();
  let storage: FerretDbStorage | undefined;
  let server: ManagedProcess | undefined;
  const stopServer = async (): Promise<void> => {
    // Both servers shut down cleanly on SIGTERM (mongod flushes its journal); FerretDB goes
    // first, then the cluster under it.
    await server?.terminate(15_000);
    await storage?.postgres.stop();
  };
  try {
    let args: string[];
    if (kind === 'mongod') {
      const dataDir = join(dir, 'data');
      await mkdir(dataDir, { recursive: true, mode: 0o700 });
      args = mongodArgs(opts, port, dataDir);
    } else {
      storage = await startFerretDbStorage(dir, {
        timeoutMs,
        logins: [user, ...(opts.logins ?? [])],
        log: opts.log,
        ttlIntervalSeconds: opts.ttlIntervalSeconds,
      });
      args = ferretDbArgs(await frontEndTlsFiles(storage.postgres.runAs, dir, opts), port, dir, storage.urlFile);
    }
    server = storage ? await spawnFrontEnd(storage, command, args, logFile, dir) : await spawnManaged(command, args, { logFile, cwd: dir });
    const stopped = storage ? AbortSignal.any([server.exitSignal, storageExitSignal(storage.postgres)]) : server.exitSignal;
    await waitForPort('127.0.0.1', port, timeoutMs, { signal: stopped });
    if (kind === 'mongod') await ensureMongodUser(opts, port);
    await retryUntilReady(() => pingWithCredentials(endpoint, user), { started, timeoutMs, stopped });
  } catch (err) {
    await stopServer().catch(() => undefined);
    throw await startupError(`${kind} on port ${port}`, err, logFile, LOG_ERRORS);
  }
  return handle(kind, server as ManagedProcess, storage, port, `mongodb://localhost:${port}/`, logFile, stopServer);
}

function handle(
  kind: MongoWireKind,
  front: ManagedProcess,
  storage: FerretDbStorage | undefined,
  port: number,
  uri: string,
  logFile: string,
  stopServer: () => Promise<void>,
): MongoWireHandle {
  let stopping: Promise<void> | undefined;
  return {
    kind,
    pid: front.pid,
    port,
    uri,
    authSource: AUTH_SOURCE,
    logFile,
    // The service is down when either process is: the supervisor then restarts both.
    exited: storage ? Promise.race([front.exited, storage.postgres.exited]) : front.exited,
    stop: () => (stopping ??= stopServer()),
  };
}

export interface PrivateFerretDbOptions {
  /** Working directory of this server (data, state, log, and the socket's directory). */
  dir: string;
  /** Its only login (besides the internal engine role): created, or given this password, at every start. */
  username: string;
  password: string;
  startTimeoutMs?: number;
  /** Told what was killed of a dead earlier instance of its PostgreSQL cluster. */
  log?: (message: string) => void;
  /**
   * The OS group whose members may open the socket (the API's user), when started as root;
   * otherwise only the server's own OS user and root can.
   */
  clientGroup?: string;
}

/**
 * The Unix socket's path must fit in sockaddr_un.sun_path (108 bytes with the terminating NUL on
 * Linux); a longer one fails in FerretDB with a message that does not say why.
 */
const MAX_SOCKET_PATH = 107;

/** Where a private server in `dir` listens. */
export function privateSocketPath(dir: string): string {
  return join(resolve(dir), 'socket', 'ferretdb.sock');
}

/**
 * A FerretDB v2 server on its own PostgreSQL cluster that listens only on a Unix socket in a 0700
 * directory, with one login: for data no network client may reach, whatever credentials it holds.
 * FerretDB has no authorization (every login may read and write everything, see the header of
 * src/installation/database-users.ts) and its logins are the roles of its cluster; a cluster of
 * its own is what keeps the logins made on another engine from authenticating here at all.
 * Plaintext on the socket: only this user, the members of `clientGroup` (and root) can open it,
 * and nothing crosses a network.
 */
export async function startPrivateFerretDb(opts: PrivateFerretDbOptions): Promise<MongoWireHandle> {
  const { command } = chooseServer('ferretdb');
  const dir = resolve(opts.dir);
  const socket = privateSocketPath(dir);
  if (Buffer.byteLength(socket) > MAX_SOCKET_PATH) {
    throw new Error(`the socket path ${socket} is longer than ${MAX_SOCKET_PATH} bytes: choose a shorter install directory`);
  }
  const timeoutMs = opts.startTimeoutMs ?? 60_000;
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await mkdir(dirname(socket), { recursive: true, mode: 0o700 });
  await chmod(dirname(socket), 0o700);
  // A socket file left by a killed server would make the listener fail with "address already in use".
  await rm(socket, { force: true });
  const logFile = join(dir, 'ferretdb.log');
  const endpoint: Endpoint = { socket };
  const user = { username: opts.username, password: opts.password };

  const started = Date.now();
  let storage: FerretDbStorage | undefined;
  let server: ManagedProcess | undefined;
  const stopServer = async (): Promise<void> => {
    await server?.terminate(15_000);
    await storage?.postgres.stop();
  };
  try {
    storage = await startFerretDbStorage(dir, { timeoutMs, logins: [user], serviceUser: PRIVATE_STORE_OS_USER, log: opts.log });
    const clientGid = opts.clientGroup === undefined ? undefined : await groupId(opts.clientGroup);
    await socketDirFor(storage.postgres.runAs, dirname(socket), clientGid);
    const args = [
      `--postgresql-url-file=${storage.urlFile}`,
      `--state-dir=${join(dir, 'state')}`,
      // No TCP listener at all, plaintext or TLS: the socket is the only way in.
      '--listen-addr=',
      `--listen-unix=${socket}`,
      '--telemetry=disable',
      '--debug-addr=-',
      '--log-level=info',
      '--log-format=text',
    ];
    server = await spawnFrontEnd(storage, command, args, logFile, dir);
    const stopped = AbortSignal.any([server.exitSignal, storageExitSignal(storage.postgres)]);
    await retryUntilReady(() => pingWithCredentials(endpoint, user), { started, timeoutMs, stopped });
    if (clientGid !== undefined) await openSocketTo(socket, clientGid);
  } catch (err) {
    await stopServer().catch(() => undefined);
    throw await startupError(`ferretdb on ${socket}`, err, logFile, LOG_ERRORS);
  }
  return handle('ferretdb', server as ManagedProcess, storage, 0, unixSocketUri(socket), logFile, stopServer);
}

/**
 * The socket's directory: the server's OS user makes the socket there; members of the client
 * group may pass through to it (0710), nobody else may enter.
 */
async function socketDirFor(runAs: RunAs, dir: string, clientGid: number | undefined): Promise<void> {
  if (!runAs.owner) return;
  await chown(dir, runAs.owner.uid, clientGid ?? runAs.owner.gid);
  await chmod(dir, clientGid === undefined ? 0o700 : 0o710);
}

/** Lets the client group connect: a Unix socket is opened with write permission on its file. */
async function openSocketTo(socket: string, clientGid: number): Promise<void> {
  await chown(socket, -1, clientGid);
  await chmod(socket, 0o660);
}

function storageExitSignal(storage: PostgresHandle): AbortSignal {
  const controller = new AbortController();
  void storage.exited.then((status) => controller.abort(new Error(`PostgreSQL exited (code ${status.code}, signal ${status.signal})`)));
  return controller.signal;
}
