/**
 * Upgrade in place of a local-runtime installation whose database is still in FerretDB v1's
 * SQLite files (what earlier versions ran: `data/database/data/*.sqlite`) into the current engine.
 *
 * How: FerretDB v1 is started on the old files and the new engine (startMongoWire) in a staging
 * directory, both on free loopback ports with the installation's certificates and database
 * administrator; every application database is copied through the driver (database-archive:
 * Extended JSON + index definitions) and verified per collection (document counts, a content hash
 * computed on both sides, index names and keys). Only then are the files swapped: the old ones
 * move (never deleted) to `ferretdb-v1-data.old/`, the new cluster takes their place, and a record
 * of what was migrated is written to `migrated-from-ferretdb-v1.json`.
 *
 * Failure at any point before the swap removes the staging directory and leaves the old files
 * where they were, usable by the previous version. The swap itself is a few renames; the record
 * is written into the staging directory first, so an interrupted swap is completed by the next run.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { chmod, mkdir, readdir, readFile, rename, rm, stat, statfs, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { BSON, MongoClient } from 'mongodb';
import { startMongoWire, type MongoWireHandle, type MongoWireKind } from '../local-services/mongo-wire.js';
import { freePort, waitForPort } from '../local-services/ports.js';
import { spawnManaged, startupError, type ManagedProcess } from '../local-services/processes.js';
import { certificatePaths } from './certificates.js';
import { dumpDatabases, loadDatabases } from './database-archive.js';
import { isSystemDatabase } from '../db/names.js';
import { SERVICE_DATABASE } from './env-files.js';
import type { InstallConfig } from './install-config.js';
import { repositoryRoot, type InstallLayout } from './layout.js';
import { ACCOUNTS, type Secrets } from './secrets.js';

const execFileAsync = promisify(execFile);

/**
 * Browser sessions are not carried over (users log in again): they are short-lived, and the API
 * puts a TTL index on them, which could delete expired ones between the copy and its verification.
 */
const SKIPPED_COLLECTIONS = [{ db: SERVICE_DATABASE, col: 'sessions' }] as const;
const START_TIMEOUT_MS = 120_000;
/** Free space wanted beyond the old files' size: the new engine's files, WAL, the dump. */
const SPACE_FACTOR = 2;
const SPACE_MARGIN = 512 * 1024 * 1024;

export interface LegacyDatabasePaths {
  /** FerretDB v1's SQLite files, one per database. */
  sqliteDir: string;
  /** FerretDB v1's state directory (its telemetry uuid); v2 keeps its own state under the same name. */
  stateDir: string;
  /** FerretDB v1's log (the new engine writes its own under the same name). */
  logFile: string;
  /** Where the old files are kept after the migration. */
  keptDir: string;
  /** The migration's working directory: the new engine's files until they are moved in place. */
  stagingDir: string;
  /** The verified record, written before the swap (see finishSwap). */
  stagedRecord: string;
  /** Written last: the migration is complete. */
  marker: string;
}

export function legacyDatabasePaths(layout: InstallLayout): LegacyDatabasePaths {
  const dir = layout.databaseDir;
  // Short: PostgreSQL's socket path below it must stay within the 107 bytes Unix allows, and
  // inside the database directory, so the final moves are renames on one file system.
  const stagingDir = join(dir, 'new');
  return {
    sqliteDir: join(dir, 'data'),
    stateDir: join(dir, 'state'),
    logFile: join(dir, 'ferretdb.log'),
    keptDir: join(dir, 'ferretdb-v1-data.old'),
    stagingDir,
    stagedRecord: join(stagingDir, 'verified.json'),
    marker: join(dir, 'migrated-from-ferretdb-v1.json'),
  };
}

function sqliteFiles(dir: string): string[] {
  try {
    return readdirSync(dir)
      .filter((f) => f.endsWith('.sqlite'))
      .sort();
  } catch {
    return [];
  }
}

/**
 * True when the installation's database is still in FerretDB v1 files (or a verified migration
 * was interrupted during its swap) and no migration completed. Reads only.
 */
export function legacyMigrationPending(layout: InstallLayout): boolean {
  const paths = legacyDatabasePaths(layout);
  if (existsSync(paths.marker)) return false;
  return sqliteFiles(paths.sqliteDir).length > 0 || existsSync(paths.stagedRecord);
}

export interface CollectionCheck {
  documents: number;
  /** sha256 over the sorted sha256 digests of each document's canonical Extended JSON. */
  sha256: string;
  /** Names of the secondary indexes (the _id index is always there). */
  indexes: string[];
}

export interface MigrationRecord {
  migratedAt: string;
  from: { engine: string; files: string[] };
  to: { engine: MongoWireKind };
  /** Where the old files are kept; the operator may delete them. */
  oldData: string;
  totals: { databases: number; collections: number; documents: number };
  databases: Record<string, Record<string, CollectionCheck>>;
  /** Collections deliberately not copied, with their document counts. */
  skipped: Record<string, number>;
}

export interface MigrationOptions {
  layout: InstallLayout;
  config: InstallConfig;
  secrets: Secrets;
  /** One line per database (shown to the operator). */
  progress?: (text: string) => void;
  /** Details (collections, build output) for the log only. */
  log?: (text: string) => void;
  /** A FerretDB v1 binary; default: found or built by findLegacyFerretDb. */
  ferretDbV1?: string;
}

// ---------------------------------------------------------------------------------------------
// FerretDB v1 binary and launcher

function isV1Build(bin: string): boolean {
  try {
    return existsSync(bin) && readFileSync(`${bin}.build`, 'utf8').startsWith('v1.');
  } catch {
    return false;
  }
}

function v1Candidates(root: string): string[] {
  const cacheDir =
    process.env.CYBERCOM_CACHE_DIR ?? join(process.env.XDG_CACHE_HOME ?? join(process.env.HOME ?? '/root', '.cache'), 'cybercom-ts');
  const goMod = readFileSync(join(root, 'ops', 'deps', 'ferretdb-v1', 'go.mod'), 'utf8');
  const version = /^require github\.com\/FerretDB\/FerretDB (\S+)/m.exec(goMod)?.[1];
  return [
    ...[join(root, '.cache', 'bin', 'ferretdb-v1'), join(root, '.cache', 'bin', 'ferretdb')].filter(isV1Build),
    ...(version ? [join(cacheDir, `ferretdb-${version}`, 'ferretdb')].filter((p) => existsSync(p)) : []),
  ];
}

/**
 * A FerretDB v1 binary: FERRETDB_V1_BIN, or what ops/build-engine.sh --legacy-ferretdb-v1 provides
 * (it reuses an earlier version's build, or builds the pinned module; Go needed).
 */
export async function findLegacyFerretDb(log: (text: string) => void = () => undefined): Promise<string> {
  if (process.env.FERRETDB_V1_BIN) return process.env.FERRETDB_V1_BIN;
  const root = repositoryRoot();
  const found = v1Candidates(root)[0];
  if (found) return found;
  try {
    const { stdout, stderr } = await execFileAsync('bash', [join(root, 'ops', 'build-engine.sh'), '--legacy-ferretdb-v1'], {
      timeout: 900_000,
      maxBuffer: 16 * 1024 * 1024,
    });
    log(`${stdout}${stderr}`.trim());
  } catch (err) {
    const { stderr, stdout } = err as { stderr?: string; stdout?: string };
    throw new Error(
      `FerretDB v1, needed to read the old data, could not be provided: ${(stderr || stdout || (err as Error).message).trim()}`,
      {
        cause: err,
      },
    );
  }
  const built = v1Candidates(root)[0];
  if (!built) throw new Error('ops/build-engine.sh --legacy-ferretdb-v1 left no FerretDB v1 binary in .cache/bin/ferretdb-v1');
  return built;
}

interface TlsFiles {
  caFile: string;
  clientCaFile: string;
  certFile: string;
  keyFile: string;
  certKeyFile: string;
  /** The client certificate+key the migration connects with. */
  clientCertKeyFile: string;
}

function tlsFiles(layout: InstallLayout): TlsFiles {
  const server = certificatePaths(layout.certsDir, 'mongodb');
  return {
    caFile: certificatePaths(layout.certsDir, 'ca').certFile,
    clientCaFile: certificatePaths(layout.certsDir, 'client-ca').certFile,
    certFile: server.certFile,
    keyFile: server.keyFile,
    certKeyFile: server.combinedFile,
    clientCertKeyFile: certificatePaths(layout.certsDir, 'api').combinedFile,
  };
}

function adminClient(port: number, tls: TlsFiles, secrets: Secrets): MongoClient {
  return new MongoClient(`mongodb://localhost:${port}/`, {
    tls: true,
    tlsCAFile: tls.caFile,
    tlsCertificateKeyFile: tls.clientCertKeyFile,
    directConnection: true,
    auth: { username: ACCOUNTS.database.admin, password: secrets.DB_ADMIN_PASSWORD },
    authSource: ACCOUNTS.authSource,
    serverSelectionTimeoutMS: 5000,
    connectTimeoutMS: 5000,
  });
}

/**
 * The command line earlier versions ran FerretDB v1 with: SQLite files in `dataDir`, TLS only with
 * client certificates from `clientCaFile`, SCRAM users (the setup user's name and password come
 * from the environment, FERRETDB_SETUP_USERNAME/PASSWORD, never argv).
 */
export function legacyFerretDbArgs(o: {
  dataDir: string;
  stateDir: string;
  port: number;
  certFile: string;
  keyFile: string;
  clientCaFile: string;
}): string[] {
  return [
    '--handler=sqlite',
    // A directory URI with a trailing slash, as FerretDB v1 requires.
    `--sqlite-url=file:${o.dataDir}/`,
    `--state-dir=${o.stateDir}`,
    '--listen-addr=',
    `--listen-tls=127.0.0.1:${o.port}`,
    `--listen-tls-cert-file=${o.certFile}`,
    `--listen-tls-key-file=${o.keyFile}`,
    `--listen-tls-ca-file=${o.clientCaFile}`,
    // v1's SCRAM users live in its own tables; the setup user is created with a new data directory.
    '--test-enable-new-auth',
    `--setup-database=${ACCOUNTS.authSource}`,
    '--telemetry=disable',
    '--debug-addr=-',
    '--log-level=info',
    '--log-format=text',
  ];
}

interface LegacyServer {
  port: number;
  stop(): Promise<void>;
}

/**
 * FerretDB v1 on the old SQLite files, as earlier versions started it (TLS with client
 * certificates, SCRAM as the installation's database administrator), but on a free loopback
 * port and with a state directory of its own, so the new engine can use the usual one.
 */
async function startLegacyFerretDb(
  binary: string,
  dataDir: string,
  workDir: string,
  tls: TlsFiles,
  secrets: Secrets,
): Promise<LegacyServer> {
  const port = await freePort();
  const stateDir = join(workDir, 'ferretdb-v1-state');
  const logFile = join(workDir, 'ferretdb-v1.log');
  await mkdir(stateDir, { recursive: true, mode: 0o700 });
  const args = legacyFerretDbArgs({
    dataDir,
    stateDir,
    port,
    certFile: tls.certFile,
    keyFile: tls.keyFile,
    clientCaFile: tls.clientCaFile,
  });
  // The credentials go through the environment, not argv (public in `ps`).
  const env = { ...process.env, FERRETDB_SETUP_USERNAME: ACCOUNTS.database.admin, FERRETDB_SETUP_PASSWORD: secrets.DB_ADMIN_PASSWORD };
  let server: ManagedProcess | undefined;
  const started = Date.now();
  try {
    server = await spawnManaged(binary, args, { logFile, cwd: workDir, env });
    await waitForPort('127.0.0.1', port, START_TIMEOUT_MS, { signal: server.exitSignal });
    for (let attempt = 1; ; attempt++) {
      const client = adminClient(port, tls, secrets);
      try {
        await client.db(ACCOUNTS.authSource).command({ listCollections: 1, nameOnly: true });
        break;
      } catch (err) {
        server.exitSignal.throwIfAborted();
        if (Date.now() - started > START_TIMEOUT_MS) throw err;
        await sleep(Math.min(250 * attempt, 2000));
      } finally {
        await client.close();
      }
    }
  } catch (err) {
    await server?.terminate(15_000).catch(() => undefined);
    throw await startupError(`FerretDB v1 (${binary}) on port ${port}`, err, logFile, /level=(ERROR|FATAL|DPANIC|PANIC)|^panic:/);
  }
  const running = server;
  return { port, stop: async () => void (await running.terminate(15_000)) };
}

// ---------------------------------------------------------------------------------------------
// Verification

/**
 * Count and content hash of a collection through the driver. Documents are hashed one by one and
 * the digests sorted, so the result does not depend on the order a server returns them in (the
 * two engines may order mixed _id types differently); field order and BSON types do count.
 */
export async function collectionFingerprint(client: MongoClient, db: string, col: string): Promise<CollectionCheck> {
  const collection = client.db(db).collection(col);
  const digests: string[] = [];
  for await (const doc of collection.find({})) {
    digests.push(
      createHash('sha256')
        .update(BSON.EJSON.stringify(doc, { relaxed: false }))
        .digest('hex'),
    );
  }
  digests.sort();
  const counted = await collection.countDocuments({});
  if (counted !== digests.length) throw new Error(`${db}.${col}: the server counts ${counted} documents but returned ${digests.length}`);
  const indexes = (await collection.listIndexes().toArray()).filter((i) => i.name !== '_id_');
  return {
    documents: digests.length,
    sha256: createHash('sha256').update(digests.join('\n')).digest('hex'),
    indexes: indexes.map((i) => `${String(i.name)} ${JSON.stringify(i.key)}${i.unique ? ' unique' : ''}`).sort(),
  };
}

async function applicationCollections(client: MongoClient): Promise<Array<{ db: string; col: string }>> {
  const { databases } = await client.db('admin').admin().listDatabases({ nameOnly: true });
  const result: Array<{ db: string; col: string }> = [];
  for (const { name: db } of databases) {
    if (isSystemDatabase(db)) continue;
    const infos = await client.db(db).listCollections({}, { nameOnly: true }).toArray();
    for (const info of infos) {
      if (info.name.startsWith('system.') || (info.type ?? 'collection') !== 'collection') continue;
      result.push({ db, col: info.name });
    }
  }
  return result.sort((a, b) => a.db.localeCompare(b.db) || a.col.localeCompare(b.col));
}

const isSkipped = (db: string, col: string): boolean => SKIPPED_COLLECTIONS.some((s) => s.db === db && s.col === col);

// ---------------------------------------------------------------------------------------------
// The migration

async function directorySize(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) total += (await stat(join(entry.parentPath, entry.name))).size;
  }
  return total;
}

async function checkFreeSpace(paths: LegacyDatabasePaths, databaseDir: string): Promise<void> {
  const used = await directorySize(paths.sqliteDir);
  const fs = await statfs(databaseDir);
  const free = fs.bavail * fs.bsize;
  const wanted = used * SPACE_FACTOR + SPACE_MARGIN;
  if (free < wanted) {
    const mib = (n: number): string => `${Math.ceil(n / 1024 / 1024)} MiB`;
    throw new Error(
      `not enough free disk space to migrate the database: ${mib(free)} free in ${databaseDir}, ${mib(wanted)} wanted (the old files take ${mib(used)} and are kept)`,
    );
  }
}

/** Renames `from` to `to` unless that was done already (an interrupted swap is re-run). */
async function moveOnce(from: string, to: string): Promise<void> {
  if (!existsSync(from)) return;
  if (existsSync(to)) throw new Error(`cannot move ${from} to ${to}: it exists already`);
  await rename(from, to);
}

/**
 * The swap, after a verified copy: old files aside, the new engine's files in place, the marker,
 * the staging directory removed. Each move is skipped when already done, so an interrupted swap
 * completes on the next run.
 */
async function finishSwap(paths: LegacyDatabasePaths, databaseDir: string): Promise<MigrationRecord> {
  const record = JSON.parse(await readFile(paths.stagedRecord, 'utf8')) as MigrationRecord;
  await mkdir(paths.keptDir, { recursive: true, mode: 0o700 });
  await moveOnce(paths.sqliteDir, join(paths.keptDir, 'data'));
  if (!existsSync(join(paths.keptDir, 'state'))) await moveOnce(paths.stateDir, join(paths.keptDir, 'state'));
  if (!existsSync(join(paths.keptDir, 'ferretdb.log'))) await moveOnce(paths.logFile, join(paths.keptDir, 'ferretdb.log'));
  for (const entry of await readdir(paths.stagingDir)) {
    // The new engine's own files (postgres/ and state/, or mongod's data/); not the migration's
    // files, the servers' logs or a socket a server left behind.
    if (['verified.json', 'dump', 'ferretdb-v1-state'].includes(entry) || entry.endsWith('.log') || entry.endsWith('.sock')) continue;
    await moveOnce(join(paths.stagingDir, entry), join(databaseDir, entry));
  }
  await writeFile(paths.marker, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
  // The servers' logs of this migration (and of failed attempts) stay with the old files.
  for (const log of (await readdir(paths.stagingDir)).filter((e) => e.endsWith('.log'))) {
    await rename(join(paths.stagingDir, log), join(paths.keptDir, `migration-${log}`)).catch(() => undefined);
  }
  for (const log of (await readdir(databaseDir)).filter((e) => e.startsWith('migration-failed-'))) {
    await rename(join(databaseDir, log), join(paths.keptDir, log)).catch(() => undefined);
  }
  await rm(paths.stagingDir, { recursive: true, force: true });
  return record;
}

/**
 * Migrates the installation's FerretDB v1 data into the engine the local runtime now runs
 * (config.dbEngine, as the supervisor chooses it). The installation's services must be stopped.
 */
export async function migrateLegacyDatabase(opts: MigrationOptions): Promise<MigrationRecord> {
  const { layout, config, secrets } = opts;
  const progress = opts.progress ?? (() => undefined);
  const log = opts.log ?? (() => undefined);
  const paths = legacyDatabasePaths(layout);
  const databaseDir = layout.databaseDir;

  if (existsSync(paths.stagedRecord)) {
    progress('completing an interrupted migration (its copy was verified)');
    return finishSwap(paths, databaseDir);
  }
  // A staging directory without a record is a copy that did not finish: start over.
  await rm(paths.stagingDir, { recursive: true, force: true });
  const files = sqliteFiles(paths.sqliteDir);
  if (files.length === 0) throw new Error(`no FerretDB v1 files (*.sqlite) in ${paths.sqliteDir}`);
  if (existsSync(join(databaseDir, 'postgres'))) {
    throw new Error(
      `${join(databaseDir, 'postgres')} exists: the new engine was started on this installation before its FerretDB v1 data was migrated. ` +
        `Move that directory aside (it holds whatever was written since) and run the installer again to migrate ${paths.sqliteDir}.`,
    );
  }
  await checkFreeSpace(paths, databaseDir);
  const binary = opts.ferretDbV1 ?? (await findLegacyFerretDb(log));

  const tls = tlsFiles(layout);
  const kind: MongoWireKind | undefined = config.dbEngine === 'auto' ? undefined : config.dbEngine;
  // The database server runs as its own user (PostgreSQL) and must be able to pass through.
  await chmod(databaseDir, 0o711);
  await mkdir(paths.stagingDir, { recursive: true, mode: 0o700 });
  let legacy: LegacyServer | undefined;
  let target: MongoWireHandle | undefined;
  const clients: MongoClient[] = [];
  try {
    target = await startMongoWire({
      dir: paths.stagingDir,
      caFile: tls.caFile,
      clientCaFile: tls.clientCaFile,
      certFile: tls.certFile,
      keyFile: tls.keyFile,
      certKeyFile: tls.certKeyFile,
      clientCertKeyFile: tls.clientCertKeyFile,
      username: ACCOUNTS.database.admin,
      password: secrets.DB_ADMIN_PASSWORD,
      bindHost: '127.0.0.1',
      kind,
      startTimeoutMs: START_TIMEOUT_MS,
    });
    legacy = await startLegacyFerretDb(binary, paths.sqliteDir, paths.stagingDir, tls, secrets);
    const source = adminClient(legacy.port, tls, secrets);
    const destination = adminClient(target.port, tls, secrets);
    clients.push(source, destination);

    const dumpDir = join(paths.stagingDir, 'dump');
    await dumpDatabases(source, dumpDir, (db, col, count) => log(`read ${db}.${col}: ${count} documents`));
    const skipped: Record<string, number> = {};
    for (const { db, col } of SKIPPED_COLLECTIONS) {
      const file = join(dumpDir, encodeURIComponent(db), `${encodeURIComponent(col)}.jsonl`);
      if (!existsSync(file)) continue;
      skipped[`${db}.${col}`] = (await readFile(file, 'utf8')).split('\n').filter((l) => l.trim() !== '').length;
      await rm(file);
      await rm(join(dumpDir, encodeURIComponent(db), `${encodeURIComponent(col)}.indexes.json`), { force: true });
    }
    const warnings: string[] = [];
    await loadDatabases(destination, dumpDir, (text) => warnings.push(text));
    if (warnings.length > 0) throw new Error(`indexes the new engine refused:\n${warnings.join('\n')}`);
    await rm(dumpDir, { recursive: true, force: true });

    // Verification: every collection the old server lists, compared with the new server's copy.
    const expected = (await applicationCollections(source)).filter((c) => !isSkipped(c.db, c.col));
    const present = new Set((await applicationCollections(destination)).map((c) => `${c.db}.${c.col}`));
    const databases: MigrationRecord['databases'] = {};
    const problems: string[] = [];
    for (const { db, col } of expected) {
      const name = `${db}.${col}`;
      if (!present.has(name)) {
        problems.push(`${name}: missing in the new engine`);
        continue;
      }
      const before = await collectionFingerprint(source, db, col);
      const after = await collectionFingerprint(destination, db, col);
      log(`verified ${name}: ${before.documents} documents, sha256 ${before.sha256}, indexes [${before.indexes.join(', ')}]`);
      if (before.documents !== after.documents)
        problems.push(`${name}: ${before.documents} documents in FerretDB v1, ${after.documents} in the new engine`);
      else if (before.sha256 !== after.sha256)
        problems.push(`${name}: content differs (sha256 ${before.sha256} in FerretDB v1, ${after.sha256} in the new engine)`);
      const missingIndexes = before.indexes.filter((i) => !after.indexes.includes(i));
      if (missingIndexes.length > 0) problems.push(`${name}: indexes missing in the new engine: ${missingIndexes.join('; ')}`);
      (databases[db] ??= {})[col] = after;
    }
    if (problems.length > 0) throw new Error(`the copy does not match the old data:\n${problems.join('\n')}`);
    for (const [db, cols] of Object.entries(databases)) {
      const documents = Object.values(cols).reduce((n, c) => n + c.documents, 0);
      progress(
        `${db}: ${plural(Object.keys(cols).length, 'collection')}, ${plural(documents, 'document')}: counts and content hashes match`,
      );
    }

    const collections = Object.values(databases).flatMap((cols) => Object.values(cols));
    const record: MigrationRecord = {
      migratedAt: new Date().toISOString(),
      from: { engine: `FerretDB ${await legacyVersion(binary)} (SQLite)`, files },
      to: { engine: target.kind },
      oldData: paths.keptDir,
      totals: {
        databases: Object.keys(databases).length,
        collections: collections.length,
        documents: collections.reduce((n, c) => n + c.documents, 0),
      },
      databases,
      skipped,
    };
    await Promise.all(clients.map((c) => c.close()));
    clients.length = 0;
    await target.stop();
    target = undefined;
    await legacy.stop();
    legacy = undefined;
    // From here on the copy counts as done: an interrupted swap is completed by the next run.
    await writeFile(paths.stagedRecord, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
    return await finishSwap(paths, databaseDir);
  } catch (err) {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await target?.stop().catch(() => undefined);
    await legacy?.stop().catch(() => undefined);
    if (!existsSync(paths.stagedRecord)) {
      // Keep the servers' logs of the failed attempt next to the old files, then drop the partial copy.
      const kept: string[] = [];
      for (const name of ['ferretdb-v1.log', 'ferretdb.log', 'mongod.log']) {
        const to = join(databaseDir, `migration-failed-${name}`);
        if (
          await rename(join(paths.stagingDir, name), to).then(
            () => true,
            () => false,
          )
        )
          kept.push(to);
      }
      await rm(paths.stagingDir, { recursive: true, force: true }).catch(() => undefined);
      const reason = err instanceof Error ? err.message : String(err);
      throw new Error(
        `${reason}\nThe FerretDB v1 data in ${paths.sqliteDir} was left as it was and the partial copy was removed` +
          `${kept.length > 0 ? ` (server logs: ${kept.join(', ')})` : ''}; fix the cause and run the installer again.`,
        { cause: err },
      );
    }
    throw err;
  }
}

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

async function legacyVersion(binary: string): Promise<string> {
  try {
    const { stdout } = await execFileAsync(binary, ['--version'], { timeout: 10_000 });
    return /version:\s*(\S+)/.exec(stdout)?.[1] ?? 'v1';
  } catch {
    return 'v1';
  }
}
