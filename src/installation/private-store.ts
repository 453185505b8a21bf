/**
 * The local runtime's private store: the service's own data (users, groups, grants, tokens,
 * sessions, login throttle, task history, the data store's registry) on an engine of its own that
 * only the API's login can open.
 *
 * Why: the local runtime's engine (FerretDB v2) has no authorization, so every login to it (the
 * workers' one, shipped in every worker bundle, included) could read every password hash and
 * session and write users. The private store is a second FerretDB on its own PostgreSQL cluster,
 * run by an OS user of its own and listening only on a Unix socket in a 0700 directory; its
 * cluster has no role but its engine's and the API's (with a password used nowhere else), so a
 * worker's login does not authenticate there at all, and neither the main cluster's OS user nor
 * its roles reach it (see local-services/mongo-wire.ts, startPrivateFerretDb). The main engine keeps the data store, the
 * catalog and the task results the workers write. MongoDB enforces the workers' role, so
 * installations on mongod (and compose) keep one engine.
 */
import { MongoClient, MongoServerError, type Db, type Document } from 'mongodb';
import { findExecutable } from '../local-services/processes.js';
import { privateSocketPath, unixSocketUri } from '../local-services/mongo-wire.js';
import { PROBE_COLLECTION_PREFIX } from '../db/storage-state.js';
import { DEFAULT_RESULT_COLLECTION } from '../queue/results/result-store.js';
import type { InstallConfig } from './install-config.js';
import type { InstallLayout } from './layout.js';
import { ACCOUNTS, type Secrets } from './secrets.js';

/** Whether this installation keeps its service data in a private store. */
export function hasPrivateStore(config: Pick<InstallConfig, 'runtime' | 'dbEngine'>): boolean {
  if (config.runtime !== 'local') return false;
  // 'auto' runs mongod when it is on PATH (local-services/mongo-wire.ts), and mongod enforces roles.
  return config.dbEngine === 'ferretdb' || (config.dbEngine === 'auto' && findExecutable('mongod') === undefined);
}

/** The API's login to the private store: the API's name, with a password of its own. */
export function privateStoreLogin(secrets: Secrets): { username: string; password: string } {
  return { username: ACCOUNTS.database.api, password: secrets.DB_PRIVATE_API_PASSWORD };
}

/** The variables that point the API at the private store (config/connections.ts). */
export function privateStoreEnv(layout: InstallLayout, secrets: Secrets): Record<string, string> {
  const login = privateStoreLogin(secrets);
  return {
    PRIVATE_MONGO_URI: unixSocketUri(privateSocketPath(layout.privateDatabaseDir)),
    PRIVATE_MONGO_USERNAME: login.username,
    PRIVATE_MONGO_PASSWORD: login.password,
    PRIVATE_MONGO_AUTH_SOURCE: ACCOUNTS.authSource,
  };
}

/** A client of the private store from this host (operator commands, the supervisor). */
export function hostPrivateMongoClient(layout: InstallLayout, secrets: Secrets, timeoutMs = 5000): MongoClient {
  return new MongoClient(unixSocketUri(privateSocketPath(layout.privateDatabaseDir)), {
    directConnection: true,
    auth: privateStoreLogin(secrets),
    authSource: ACCOUNTS.authSource,
    serverSelectionTimeoutMS: timeoutMs,
    connectTimeoutMS: timeoutMs,
  });
}

/**
 * Whether a collection of the service database is the service's own (private) data: everything
 * but the task results the workers write and the storage probe's scratch collections.
 */
export function isPrivateCollection(name: string, resultCollection = DEFAULT_RESULT_COLLECTION): boolean {
  return name !== resultCollection && !name.startsWith('system.') && !name.startsWith(PROBE_COLLECTION_PREFIX);
}

/** Backups and restores: whether a collection belongs in the private store (the rest, in the main engine). */
export function inPrivateStore(serviceDatabase: string): (db: string, col: string) => boolean {
  return (db, col) => db === serviceDatabase && isPrivateCollection(col);
}

/** Written in the private store once the service data has moved there; later starts never copy again. */
export const LAYOUT_COLLECTION = 'service_layout';
const MOVED_MARKER = 'private-store';
const BATCH = 1000;
const NAMESPACE_NOT_FOUND = 26;

async function dropIfExists(db: Db, name: string): Promise<void> {
  try {
    await db.collection(name).drop();
  } catch (err) {
    if (!(err instanceof MongoServerError && err.code === NAMESPACE_NOT_FOUND)) throw err;
  }
}

async function copyCollection(source: Db, target: Db, name: string, warn: (line: string) => void): Promise<number> {
  const from = source.collection(name);
  const to = target.collection(name);
  await target.createCollection(name);
  let batch: Document[] = [];
  let count = 0;
  for await (const doc of from.find({}, { sort: { _id: 1 } })) {
    batch.push(doc);
    if (batch.length >= BATCH) {
      await to.insertMany(batch, { ordered: true });
      count += batch.length;
      batch = [];
    }
  }
  if (batch.length > 0) {
    await to.insertMany(batch, { ordered: true });
    count += batch.length;
  }
  for (const { key, v: _v, ns: _ns, ...options } of await from.listIndexes().toArray()) {
    if (options.name === '_id_') continue;
    // The API creates the indexes it needs at start-up anyway: one that cannot be copied must not
    // stop the move (and with it every start).
    await to
      .createIndex(key as Document, options)
      .catch((err: unknown) => warn(`index ${String(options.name)} on ${name}: ${(err as Error).message}`));
  }
  return count;
}

export interface MoveOutcome {
  /** Collections moved by this call, with their document counts. */
  moved: Record<string, number>;
  /** True when the move had happened before (nothing was read from the main engine). */
  alreadyDone: boolean;
}

/**
 * Moves the service data an installation made before the private store existed from the main
 * engine into the private store: each collection copied (replacing whatever an interrupted earlier
 * attempt left), then dropped from the main engine; a marker in the private store at the end.
 *
 * Safe to re-run after a crash at any point: a collection still on the main engine is the whole
 * truth (it is dropped there only after its copy is complete), so copying it again loses nothing.
 * Once the marker exists the main engine is never read again: what a worker's login writes into
 * the service database there afterwards (a forged `users`, say) never reaches the service.
 */
export async function moveServiceData(
  main: MongoClient,
  privateStore: MongoClient,
  database: string,
  log: (line: string) => void = () => undefined,
): Promise<MoveOutcome> {
  const target = privateStore.db(database);
  const marker = target.collection<{ _id: string; at: Date; moved: string[] }>(LAYOUT_COLLECTION);
  if ((await marker.findOne({ _id: MOVED_MARKER })) !== null) return { moved: {}, alreadyDone: true };
  const source = main.db(database);
  const names = (await source.listCollections({}, { nameOnly: true }).toArray())
    .map((c) => c.name)
    .filter((name) => isPrivateCollection(name) && name !== LAYOUT_COLLECTION)
    .sort();
  const moved: Record<string, number> = {};
  for (const name of names) {
    await dropIfExists(target, name);
    moved[name] = await copyCollection(source, target, name, log);
    await dropIfExists(source, name);
    log(`moved ${database}.${name} (${moved[name]} documents) to the private store`);
  }
  await marker.updateOne({ _id: MOVED_MARKER }, { $setOnInsert: { at: new Date(), moved: names } }, { upsert: true });
  return { moved, alreadyDone: false };
}
