/**
 * A private PostgreSQL 15 cluster with the DocumentDB extension: the storage engine under
 * FerretDB in the local runtime. Private means its own data directory, port and socket directory,
 * so it neither touches nor depends on a system cluster and several can run side by side.
 *
 * Reachable only through a Unix socket in a 0700 directory (only the cluster's own OS user and
 * root can enter it) and no TCP listener at all: a password learnt or set through the front end
 * never gives SQL to anyone on the host. On that socket the bootstrap superuser and the front end's
 * role log in by peer authentication as the cluster's own OS user only (set-up, DocumentDB's
 * background jobs connecting back, and the front end, which runs as that user too); no other role
 * logs in to the cluster at all, no other OS user is mapped to a role (root included), and
 * nothing is trusted. As root, the cluster runs as a system user (by default `postgres` of
 * Debian's package), as PostgreSQL insists.
 *
 * The front end's roles (FerretDB's own, and the logins of its clients) are ordinary roles, never
 * superusers and unable to create or alter roles, and DocumentDB's user management through the
 * front end is off: FerretDB runs every client's command on its own connection, so any client
 * could otherwise set any role's password (the engine's own included). Logins are set here, in
 * SQL, at every start.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { appendFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { killAndWait, processesWorkingIn } from './leftover-processes.js';
import { freePort } from './ports.js';
import { spawnManaged, startupError, type ExitStatus, type ManagedProcess, type ServerHandle } from './processes.js';
import { userInfo } from 'node:os';
import { assertTraversable, commandAs, ensureSystemUser, handOver, handOverTree, runAsServiceUser, type RunAs } from './service-user.js';

const execFileAsync = promisify(execFile);

const PG_BIN = '/usr/lib/postgresql/15/bin';
/** Debian's package's user; the default OS user of a cluster. */
const DEFAULT_SERVICE_USER = 'postgres';
/** The cluster's bootstrap superuser, reached only through the socket by the cluster's OS user. */
const BOOTSTRAP_ROLE = 'postgres';
const INCLUDE_LINE = "include 'cybercom.conf'";

export interface PostgresOptions {
  /** Working directory: data/, socket/ and postgres.log. */
  dir: string;
  port?: number;
  /**
   * The database front end's (FerretDB's) own role. It has no password: it logs in by peer
   * authentication as the cluster's OS user (who runs the front end too, see `runAs` of the
   * handle), so no client of the front end can log in as it or learn a password that opens the
   * cluster.
   */
  role: string;
  /** The front end's client logins, created or given these passwords (others are left alone). */
  logins?: readonly RoleLogin[];
  /**
   * The OS user the cluster runs as when started by root (default `postgres`); created as a system
   * user when missing. A cluster of its own user keeps another cluster's user out of its files.
   */
  serviceUser?: string;
  startTimeoutMs?: number;
  /**
   * How often DocumentDB deletes documents past their TTL index's expiry, in seconds (1-59);
   * default its own schedule, once a minute. A test of TTL indexes waits for one run.
   */
  ttlIntervalSeconds?: number;
  /**
   * Told which leftover processes of the cluster were killed (one line each time); the line goes
   * to postgres.log in any case.
   */
  log?: (message: string) => void;
}

export interface RoleLogin {
  username: string;
  password: string;
}

export interface PostgresHandle extends ServerHandle {
  /** postgres://role@/postgres?host=<socket dir>&port=<port>: the front end's URL. */
  url: string;
  socketDir: string;
  /** How to run a program as the cluster's OS user: the front end runs so, to log in by peer authentication. */
  runAs: RunAs;
}

/** DocumentDB's role for the gateway's users: the data commands, no role management. */
const DOCUMENTDB_ROLE = 'documentdb_admin_role';
/** The name of the peer-authentication map in pg_ident.conf. */
const PEER_MAP = 'cluster';

/** Single-quoted SQL literal / configuration value. */
function quoteLiteral(value: string): string {
  return `'${value.replaceAll("'", "''")}'`;
}

function quoteIdentifier(value: string): string {
  return `"${value.replaceAll('"', '""')}"`;
}

/** Settings of the cluster, rewritten at every start (the port may change). */
function clusterConf(port: number, socketDir: string): string {
  const settings: Record<string, string> = {
    // No TCP listener: the socket (0700) is the only way in.
    listen_addresses: quoteLiteral(''),
    port: String(port),
    unix_socket_directories: quoteLiteral(socketDir),
    unix_socket_permissions: '0700',
    shared_preload_libraries: quoteLiteral('pg_cron,pg_documentdb_core,pg_documentdb'),
    'cron.database_name': quoteLiteral('postgres'),
    // DocumentDB's scheduled jobs (TTL deletes, index builds, cursor clean-up) run every few
    // seconds. In background workers they need no login; over a connection they would log in to
    // localhost by TCP as the bootstrap role, which has no password, and fail every time.
    'cron.use_background_workers': 'on',
    max_worker_processes: '16',
    // One log line per job run would grow the log by tens of thousands of lines a day.
    'cron.log_run': 'off',
    'cron.log_statement': 'off',
    // DocumentDB's background jobs (TTL indexes, index builds, dropDatabase) connect back here.
    'documentdb.localhost_connection_string': quoteLiteral(`host=${socketDir} port=${port} user=${BOOTSTRAP_ROLE} dbname=postgres`),
    'documentdb.enableCompact': 'true',
    'documentdb.enableLetAndCollationForQueryMatch': 'true',
    'documentdb.enableNowSystemVariable': 'true',
    'documentdb.enableSchemaValidation': 'true',
    'documentdb.enableBypassDocumentValidation': 'true',
    // createUser, updateUser, dropUser and usersInfo through the front end: off. FerretDB runs
    // them on its own connection for whichever client sends them (it has no authorization), so
    // any login could set any role's password; logins are set in SQL at start-up instead.
    'documentdb.enableUserCrud': 'false',
    // The default (1 GB) let the write-ahead log grow to hundreds of MB under an import.
    max_wal_size: quoteLiteral('256MB'),
    min_wal_size: quoteLiteral('64MB'),
    // Before crash recovery the server makes sure everything in the data directory is on disk:
    // one syncfs() of its file system instead of an fsync of every file, which took seconds of a
    // restart after a crash (the data files are in the page cache after a process crash anyway).
    recovery_init_sync_method: 'syncfs',
    // Server log on stderr, which spawnManaged writes to postgres.log.
    logging_collector: 'off',
    log_destination: quoteLiteral('stderr'),
    log_line_prefix: quoteLiteral('%m [%p] '),
  };
  return `${Object.entries(settings)
    .map(([key, value]) => `${key} = ${value}`)
    .join('\n')}\n`;
}

/**
 * Who may log in, rewritten at every start: by peer authentication only, as pg_ident.conf maps OS
 * users to roles; nobody with a password (the clients' logins are checked by the front end, which
 * reads their SCRAM verifiers itself) and nobody trusted. There is no TCP listener, so no `host`
 * line either.
 */
function hbaConf(role: string): string {
  return [`local all ${BOOTSTRAP_ROLE} peer map=${PEER_MAP}`, `local all ${quoteIdentifier(role)} peer map=${PEER_MAP}`, ''].join('\n');
}

/**
 * The peer map: the cluster's OS user is the bootstrap superuser and the front end's role (the
 * front end runs as that user, and DocumentDB's background work connects back as the role that
 * asked for it). Nobody else: not root, not the OS user of the process that started the cluster,
 * so that a service running as another user on this host has no road into the cluster's SQL.
 */
export function identConf(clusterUser: string, role: string): string {
  return `${[`${clusterUser} ${BOOTSTRAP_ROLE}`, `${clusterUser} ${role}`].map((line) => `${PEER_MAP} ${line}`).join('\n')}\n`;
}

/**
 * A role of the front end (its own, without a password, or a client's login), created or brought
 * to this password and to no more than DocumentDB's gateway role: an earlier version made these
 * superusers, which this takes back.
 */
function roleSql(username: string, password: string | null): string[] {
  const role = quoteIdentifier(username);
  const attributes = `LOGIN NOSUPERUSER NOCREATEROLE NOCREATEDB NOREPLICATION NOBYPASSRLS PASSWORD ${password === null ? 'NULL' : quoteLiteral(password)}`;
  return [
    'DO $do$ BEGIN',
    `  IF EXISTS (SELECT FROM pg_roles WHERE rolname = ${quoteLiteral(username)}) THEN`,
    `    ALTER ROLE ${role} WITH ${attributes};`,
    '  ELSE',
    `    CREATE ROLE ${role} WITH ${attributes};`,
    '  END IF;',
    'END $do$;',
    `GRANT ${DOCUMENTDB_ROLE} TO ${role};`,
  ];
}

async function runPsql(command: [string, string[]], sql: string, env: NodeJS.ProcessEnv): Promise<void> {
  await new Promise<void>((resolvePromise, reject) => {
    const child = execFile(command[0], command[1], { env, timeout: 120_000 }, (err, _stdout, stderr) => {
      if (err) reject(new Error(`psql failed: ${stderr.trim() || err.message}`));
      else resolvePromise();
    });
    child.stdin?.end(sql);
  });
}

function describeExit(status: ExitStatus): string {
  return status.signal ? `signal ${status.signal}` : `code ${status.code}`;
}

/** How long leftover processes get to vanish after SIGKILL. */
const LEFTOVER_KILL_TIMEOUT_MS = 10_000;

/**
 * Kills every process of the cluster in `dataDir`; called where none of ours may run there:
 * before a start, and once the postmaster has exited. A postmaster that dies (SIGKILL, a crash)
 * leaves its children running: they are in sessions of their own (PostgreSQL's children call
 * setsid()), so the signal to its process group misses them, and one that does not notice the
 * postmaster's death (stopped, or stuck in a job: pg_cron's launcher has been seen to) keeps the
 * cluster's shared memory attached. A new postmaster then refuses to start ("pre-existing shared
 * memory block ... is still in use") for as long as it lives. Their work is lost either way: the
 * new postmaster recovers from the write-ahead log as after any crash, so SIGKILL costs nothing.
 */
async function killLeftovers(dataDir: string, logFile: string, when: string, log?: (message: string) => void): Promise<void> {
  const left = processesWorkingIn(join(PG_BIN, 'postgres'), dataDir);
  if (left.length === 0) return;
  const survivors = await killAndWait(left, LEFTOVER_KILL_TIMEOUT_MS);
  const list = left.map((p) => `${p.pid} (${p.command || 'postgres'})`).join(', ');
  const message =
    `${when}: killed ${left.length} leftover process(es) of the cluster in ${dataDir}: ${list}` +
    (survivors.length > 0 ? `; still running after ${LEFTOVER_KILL_TIMEOUT_MS} ms: ${survivors.map((p) => p.pid).join(', ')}` : '');
  await appendFile(logFile, `${new Date().toISOString()} [cybercom] LOG:  ${message}\n`).catch(() => undefined);
  log?.(message);
}

/** Polls pg_isready until the cluster accepts connections (exit 0). */
async function waitUntilAccepting(
  command: [string, string[]],
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    signal.throwIfAborted();
    const ready = await execFileAsync(command[0], command[1], { env, timeout: 10_000 }).then(
      () => true,
      () => false,
    );
    if (ready) return;
    if (Date.now() > deadline) throw new Error(`not accepting connections after ${timeoutMs} ms`);
    await sleep(100);
  }
}

/**
 * DocumentDB deletes expired documents in a pg_cron job (documentdb_ttl_task); pg_cron takes
 * "N seconds" schedules for intervals under a minute.
 */
function ttlScheduleSql(seconds: number): string {
  if (!Number.isInteger(seconds) || seconds < 1 || seconds > 59) {
    throw new Error(`the TTL interval must be a whole number of seconds from 1 to 59, not ${seconds}`);
  }
  return `SELECT cron.alter_job(jobid, schedule => '${seconds} seconds') FROM cron.job WHERE jobname = 'documentdb_ttl_task';`;
}

export async function startPostgres(opts: PostgresOptions): Promise<PostgresHandle> {
  const serviceUser = opts.serviceUser ?? DEFAULT_SERVICE_USER;
  if (serviceUser !== DEFAULT_SERVICE_USER) await ensureSystemUser(serviceUser);
  const runAs = await runAsServiceUser(serviceUser, 'postgresql-15');
  const clusterUser = runAs.owner ? serviceUser : userInfo().username;
  const dir = resolve(opts.dir);
  const dataDir = join(dir, 'data');
  const socketDir = join(dir, 'socket');
  const logFile = join(dir, 'postgres.log');
  const port = opts.port ?? (await freePort());
  const timeoutMs = opts.startTimeoutMs ?? 60_000;
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await mkdir(socketDir, { recursive: true, mode: 0o700 });
  await writeFile(logFile, '', { flag: 'a', mode: 0o600 });
  await assertTraversable(runAs, dir, serviceUser);
  await handOver(runAs, [dir, socketDir, logFile]);
  // A cluster made by an earlier version as another OS user becomes this one's, files and all.
  if (existsSync(dataDir)) await handOverTree(runAs, dataDir);
  const env: NodeJS.ProcessEnv = { ...process.env, ...runAs.env, LC_ALL: 'C.UTF-8', LANG: 'C.UTF-8' };

  if (!existsSync(join(dataDir, 'PG_VERSION'))) {
    const [command, args] = commandAs(runAs, join(PG_BIN, 'initdb'), [
      '--pgdata',
      dataDir,
      '--username',
      BOOTSTRAP_ROLE,
      '--encoding',
      'UTF8',
      '--locale',
      'C.UTF-8',
      // Until the first start rewrites pg_hba.conf: the cluster's own OS user only.
      '--auth-local',
      'peer',
      '--auth-host',
      'reject',
    ]);
    try {
      await execFileAsync(command, args, { env, timeout: 120_000 });
    } catch (err) {
      throw new Error(`initdb of ${dataDir} failed: ${(err as { stderr?: string }).stderr?.trim() || (err as Error).message}`, {
        cause: err,
      });
    }
    await appendFile(join(dataDir, 'postgresql.conf'), `\n${INCLUDE_LINE}\n`);
  }
  const mainConf = await readFile(join(dataDir, 'postgresql.conf'), 'utf8');
  if (!mainConf.includes(INCLUDE_LINE)) await appendFile(join(dataDir, 'postgresql.conf'), `\n${INCLUDE_LINE}\n`);
  await writeFile(join(dataDir, 'cybercom.conf'), clusterConf(port, socketDir), { mode: 0o600 });
  await writeFile(join(dataDir, 'pg_hba.conf'), hbaConf(opts.role), { mode: 0o600 });
  await writeFile(join(dataDir, 'pg_ident.conf'), identConf(clusterUser, opts.role), { mode: 0o600 });
  await handOver(
    runAs,
    ['cybercom.conf', 'pg_hba.conf', 'pg_ident.conf'].map((name) => join(dataDir, name)),
  );
  // Whoever ran the last instance may have died with it (a supervisor that was killed, say).
  await killLeftovers(dataDir, logFile, 'before start', opts.log);

  let server: ManagedProcess | undefined;
  /** Settles once the postmaster has exited and nothing of its instance is left. */
  let ended: Promise<ExitStatus> | undefined;
  const stopCluster = async (): Promise<void> => {
    // SIGINT is PostgreSQL's "fast" shutdown (clients disconnected, a clean checkpoint); SIGTERM
    // would wait for every client session to end by itself.
    if (server?.isRunning()) server.signalGroup('SIGINT');
    await server?.terminate(30_000);
    await ended;
  };
  try {
    const [command, args] = commandAs(runAs, join(PG_BIN, 'postgres'), ['-D', dataDir]);
    server = await spawnManaged(command, args, { logFile, env, cwd: dir });
    // Its children outlive a postmaster that dies: they go as soon as it does, not only when
    // someone stops the cluster, so a restart never meets them.
    ended = server.exited.then(async (status) => {
      await killLeftovers(dataDir, logFile, `after the postmaster exited (${describeExit(status)})`, opts.log);
      return status;
    });
    // Polled until recovery has finished ("the database system is starting up" until then).
    await waitUntilAccepting(
      commandAs(runAs, join(PG_BIN, 'pg_isready'), ['-q', '-h', socketDir, '-p', String(port), '-d', 'postgres']),
      env,
      timeoutMs,
      server.exitSignal,
    );
    // DocumentDB (and what it requires) in the database FerretDB uses, FerretDB's own role and
    // its clients' logins.
    const sql = [
      'SET client_min_messages = warning;',
      'CREATE EXTENSION IF NOT EXISTS documentdb CASCADE;',
      ...roleSql(opts.role, null),
      ...(opts.logins ?? []).flatMap((login) => roleSql(login.username, login.password)),
      ...(opts.ttlIntervalSeconds === undefined ? [] : [ttlScheduleSql(opts.ttlIntervalSeconds)]),
      '',
    ].join('\n');
    const psql = commandAs(runAs, join(PG_BIN, 'psql'), [
      '-X',
      '-q',
      '-v',
      'ON_ERROR_STOP=1',
      '-h',
      socketDir,
      '-p',
      String(port),
      '-U',
      BOOTSTRAP_ROLE,
      '-d',
      'postgres',
    ]);
    await runPsql(psql, sql, env);
  } catch (err) {
    await stopCluster().catch(() => undefined);
    throw await startupError(`PostgreSQL on port ${port}`, err, logFile, /\b(FATAL|PANIC|ERROR):/);
  }

  let stopping: Promise<void> | undefined;
  const running = server as ManagedProcess;
  return {
    pid: running.pid,
    port,
    logFile,
    socketDir,
    runAs,
    url: `postgres://${encodeURIComponent(opts.role)}@/postgres?${new URLSearchParams({ host: socketDir, port: String(port) }).toString()}`,
    exited: ended as Promise<ExitStatus>,
    stop: () => (stopping ??= stopCluster()),
  };
}
