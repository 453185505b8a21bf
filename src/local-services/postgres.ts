/**
 * A private PostgreSQL 15 cluster with the DocumentDB extension: the storage engine under
 * FerretDB in the local runtime. Private means its own data directory, port and socket directory,
 * so it neither touches nor depends on a system cluster and several can run side by side.
 *
 * Reachable only from this host: TCP on 127.0.0.1 (password login, for FerretDB) and a Unix
 * socket in a 0700 directory (trusted: only the cluster's own user and root can enter it; used
 * for set-up and by DocumentDB's background jobs to connect back to the cluster). As root, the
 * cluster runs as the `postgres` user of Debian's package, as PostgreSQL itself insists.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { appendFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { killAndWait, processesWorkingIn } from './leftover-processes.js';
import { freePort, waitForPort } from './ports.js';
import { spawnManaged, startupError, type ExitStatus, type ManagedProcess, type ServerHandle } from './processes.js';
import { assertTraversable, commandAs, handOver, runAsServiceUser } from './service-user.js';

const execFileAsync = promisify(execFile);

const PG_BIN = '/usr/lib/postgresql/15/bin';
const SERVICE_USER = 'postgres';
/** The cluster's bootstrap superuser, reached only through the socket. */
const BOOTSTRAP_ROLE = 'postgres';
const INCLUDE_LINE = "include 'cybercom.conf'";

export interface PostgresOptions {
  /** Working directory: data/, socket/ and postgres.log. */
  dir: string;
  port?: number;
  /** A LOGIN SUPERUSER role for the database front end (FerretDB), created or given this password. */
  role: string;
  password: string;
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

export interface PostgresHandle extends ServerHandle {
  /** postgres://role:password@127.0.0.1:port/postgres */
  url: string;
  socketDir: string;
}

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
    listen_addresses: quoteLiteral('127.0.0.1'),
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
    'documentdb.enableUserCrud': 'true',
    'documentdb.maxUserLimit': '100',
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
 * Who may log in, rewritten at every start. Socket logins are trusted (the socket directory is
 * 0700). Over TCP only the front end's own role may log in: FerretDB makes every client login a
 * PostgreSQL superuser with a password, and none of them may reach SQL (and from there the files
 * and programs of this host) by dialling the cluster's port directly.
 */
function hbaConf(role: string): string {
  return ['local all all trust', `host all ${quoteIdentifier(role)} 127.0.0.1/32 scram-sha-256`, ''].join('\n');
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
  const runAs = await runAsServiceUser(SERVICE_USER, 'postgresql-15');
  const dir = resolve(opts.dir);
  const dataDir = join(dir, 'data');
  const socketDir = join(dir, 'socket');
  const logFile = join(dir, 'postgres.log');
  const port = opts.port ?? (await freePort());
  const timeoutMs = opts.startTimeoutMs ?? 60_000;
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await mkdir(socketDir, { recursive: true, mode: 0o700 });
  await writeFile(logFile, '', { flag: 'a', mode: 0o600 });
  await assertTraversable(runAs, dir, SERVICE_USER);
  await handOver(runAs, [dir, socketDir, logFile]);
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
      // Socket logins are trusted (the socket directory is 0700), TCP logins need a password.
      '--auth-local',
      'trust',
      '--auth-host',
      'scram-sha-256',
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
  await handOver(runAs, [join(dataDir, 'cybercom.conf'), join(dataDir, 'pg_hba.conf')]);
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
    await waitForPort('127.0.0.1', port, timeoutMs, { signal: server.exitSignal });
    // The port opens before recovery has finished ("the database system is starting up").
    await waitUntilAccepting(
      commandAs(runAs, join(PG_BIN, 'pg_isready'), ['-q', '-h', socketDir, '-p', String(port), '-d', 'postgres']),
      env,
      timeoutMs,
      server.exitSignal,
    );
    // DocumentDB (and what it requires) in the database FerretDB uses, and FerretDB's own role.
    const role = quoteIdentifier(opts.role);
    const password = quoteLiteral(opts.password);
    const sql = [
      'SET client_min_messages = warning;',
      'CREATE EXTENSION IF NOT EXISTS documentdb CASCADE;',
      'DO $do$ BEGIN',
      `  IF EXISTS (SELECT FROM pg_roles WHERE rolname = ${quoteLiteral(opts.role)}) THEN`,
      `    ALTER ROLE ${role} WITH LOGIN SUPERUSER PASSWORD ${password};`,
      '  ELSE',
      `    CREATE ROLE ${role} WITH LOGIN SUPERUSER PASSWORD ${password};`,
      '  END IF;',
      'END $do$;',
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
    url: `postgres://${encodeURIComponent(opts.role)}:${encodeURIComponent(opts.password)}@127.0.0.1:${port}/postgres`,
    exited: ended as Promise<ExitStatus>,
    stop: () => (stopping ??= stopCluster()),
  };
}
