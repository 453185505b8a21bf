/**
 * The repository for user documents: the only code that touches the driver for catalog and
 * data-store data. Routes speak in names and validated queries; this speaks MongoDB.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import {
  MongoServerError,
  type Collection,
  type CreateIndexesOptions,
  type Db,
  type Document,
  type IndexSpecification,
  type MongoClient,
} from 'mongodb';
import { detectEngineTraits, type EngineTraits } from '../db/engine-traits.js';
import { classifyDatabaseError, serverMessage } from '../db/errors.js';
import { operationDeadline, signalOption } from '../db/deadline.js';
import { DEFAULT_OPERATION_TIMEOUT_MS } from '../config/connections.js';
import type { Deadline } from '../lib/deadline.js';
import type { IndexDefinition } from './index-spec.js';
import { insertBatch } from './batch-insert.js';
import { int64Numbers } from './int64-numbers.js';
import { BatchBudget } from './batch-bytes.js';
import { BudgetedCursor } from './budgeted-cursor.js';
import {
  collectionExists,
  databaseExists,
  duplicateValues,
  indexExists,
  indexRefused,
  type DocumentError,
  missingGeoIndex,
  noSuchCollection,
  noSuchDatabase,
  noSuchIndex,
} from './errors.js';
import { countableFilter, nearFields } from './geo-count.js';
import { QueryBudget } from './query-budget.js';
import { RAW_RECORDS, recordReader } from './raw-records.js';
import { BsonRecord, type BsonRecordReader } from '../render/bson-record.js';
import { TtlCache } from '../lib/ttl-cache.js';
import { InFlight } from '../lib/in-flight.js';
import { CacheLeases, CACHE_LEASES_COLLECTION } from '../db/cache-leases.js';

export interface FindOptions {
  filter: Document;
  projection?: Document;
  sort?: Document;
  skip: number;
  /** 0 = no limit. */
  limit: number;
}

/** Databases created through the API are recorded here so they are listed while still empty. */
interface DatabaseRegistration {
  _id: string;
  created: Date;
}

/**
 * Largest page asked for in one batch: typical pages fit whole; beyond it (or beyond the engine's
 * 16 MiB per batch) the rest follows in later batches, which are time-limited too.
 */
export const MAX_FIRST_BATCH = 10_000;

/**
 * Engine answers to an index command that are about the index asked for, not the engine's health:
 * a bad or unsupported definition (the local engine lacks some index types and options), or data
 * that does not fit it (geo keys that are not GeoJSON).
 */
const INDEX_REFUSED_CODES = new Set([
  2, // BadValue
  9, // FailedToParse
  14, // TypeMismatch
  67, // CannotCreateIndex
  115, // CommandNotSupported
  197, // InvalidIndexSpecificationOption
  238, // NotImplemented
  16755, // cannot extract geo keys
  16766, // hashed indexes do not support array values
  17262, // unknown/unsupported text language
]);

/**
 * The local engine (FerretDB on DocumentDB) reports a unique index that existing records violate
 * as an InternalError from PostgreSQL, not as a duplicate key: recognised by its words, since
 * InternalError otherwise means the engine is unavailable.
 */
function isUniqueBuildFailure(err: MongoServerError): boolean {
  return err.code === 1 && /could not create (exclusion constraint|unique index)/i.test(serverMessage(err));
}

const CAUSED_BY = ' :: caused by :: ';

/**
 * What the engine says is wrong with the definition itself, checked before any record is read:
 * both engines answer `Error in specification { <the definition> } :: caused by :: <reason>`,
 * and the reason speaks of the definition the caller sent, nothing else.
 */
function specificationProblem(err: MongoServerError): string | undefined {
  // From the whole message: the definition it repeats may be longer than serverMessage keeps.
  const message = err.errmsg ?? err.message;
  const cause = message.lastIndexOf(CAUSED_BY);
  if (!message.includes('Error in specification') || cause === -1) return undefined;
  return message.slice(cause + CAUSED_BY.length, cause + CAUSED_BY.length + 300).trim() || undefined;
}

const fieldList = (fields: string[]): string => fields.map((field) => JSON.stringify(field)).join(', ');

/**
 * Why a build failed, from the definition and the engine's code only. The engine's own words are
 * not passed on: they quote the record that did not fit (its `_id` and the offending value), and
 * an index command must not tell its caller more about the records than that some do not fit.
 */
function buildRefusal(err: MongoServerError, index: IndexDefinition | undefined): DocumentError {
  const engineCode = String(err.codeName ?? `code ${err.code}`);
  if (index === undefined) return indexRefused(`The database refused the index command (${engineCode}).`);
  const fieldsOf = (type: string): string => fieldList(index.keys.filter(([, t]) => t === type).map(([field]) => field));
  const refused = (why: string) => indexRefused(`The database cannot build the index: ${why}`);
  if (err.code === 16755) return refused(`a record's value of ${fieldsOf('2dsphere')} is not GeoJSON a "2dsphere" index can hold.`);
  if (err.code === 16766) return refused(`a record holds an array in ${fieldsOf('hashed')}, which a "hashed" index cannot hold.`);
  if (index.keys.some(([, type]) => type === 'text') && /language/i.test(serverMessage(err))) {
    return refused('a record names a language (in its "language" field) that a "text" index does not support.');
  }
  return refused(`the records do not fit an index on ${fieldList(index.keys.map(([field]) => field))} with these options (${engineCode}).`);
}

/**
 * The DocumentError for an engine's refusal of an index command, or undefined for other failures (an
 * unavailable engine, say, which the error handler answers). `index` is the definition of a
 * create, `name` the index of a drop.
 */
function indexCommandError(err: unknown, index: IndexDefinition | undefined, name: string | undefined): DocumentError | undefined {
  if (!(err instanceof MongoServerError) || typeof err.code !== 'number') return undefined;
  if (isUniqueBuildFailure(err) || err.code === 11000) {
    // The same words however the engine tells it: its own would quote the duplicated value.
    return duplicateValues('The records already hold duplicate values for this unique index; remove the duplicates first.');
  }
  switch (err.code) {
    case 68: // IndexAlreadyExists
    case 85: // IndexOptionsConflict: the same keys under another name or options
    case 86: // IndexKeySpecsConflict: the same name with other keys
      // These quote index definitions (the one asked for, the one there), no record.
      return indexExists(`An index like this already exists: ${serverMessage(err)}`);
    case 27: // IndexNotFound
      return noSuchIndex(name ?? '');
    default: {
      const problem = specificationProblem(err);
      if (problem !== undefined) return indexRefused(`The database refused the index: ${problem}`);
      return INDEX_REFUSED_CODES.has(err.code) || classifyDatabaseError(err)?.kind === 'invalid_query'
        ? buildRefusal(err, index)
        : undefined;
    }
  }
}

/** How user records are decoded (see DocumentStore.collection). */
const RECORD_DECODING = { bsonRegExp: true } as const;

/**
 * For records and values read whole (not through a cursor of BsonRecords): numbers as their BSON
 * classes (Double, Int32, Long), so that a double 3.0 is rendered as one (render/double-text.ts)
 * and not as the integer 3 a JavaScript number would be.
 */
const TYPED_NUMBERS = { promoteValues: false } as const;

/**
 * Runs a command read with TYPED_NUMBERS. The setting decodes the whole reply, an error reply's
 * too: its `code` is then an Int32 object, which no check of `err.code === 50` (the time limit)
 * or of an unavailable engine's codes would recognise, and the failure would be a 500. The code
 * is made a number again before the error goes on.
 */
async function typedRead<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (err) {
    if (err instanceof MongoServerError && typeof err.code === 'object' && err.code !== null) err.code = Number(err.code);
    throw err;
  }
}

/** The filter of one record's `_id` (any type: an ObjectId, a string, a number, ...). */
const byId = (id: unknown): Document => ({ _id: id });

/** Enough for every database of a research group; names beyond it are simply not cached. */
const MAX_CACHED_DATABASES = 1_000;
/**
 * How long a collection seen to exist is taken to still exist without asking the engine again.
 * A drop through the API, in any of its processes, is never raced by such a copy: it waits until
 * no process may use one (see CacheLeases). A drop made past the API (a worker, a client of the
 * engine itself) is seen within this time. The default; SHARED_CACHE_MS sets it.
 */
export const COLLECTION_CACHE_MS = 2_000;
const MAX_CACHED_COLLECTIONS = 10_000;
/** How often a check waiting for a drop under way asks again whether it is done. */
const DROP_POLL_MS = 100;

/** The cache key of a collection: NUL cannot occur in either name. */
const collectionKey = (db: string, col: string): string => `${db}\u0000${col}`;
/** Its lease key and its database's lease scope (CacheLeases), apart from the accounts' keys. */
const collectionLease = (db: string, col: string): string => `collection:${collectionKey(db, col)}`;
const databaseScope = (db: string): string => `database:${db}`;

export class DocumentStore {
  private readonly registry: Collection<DatabaseRegistration>;
  /** client.db() resolves its options on every call, a measurable cost at several calls per request. */
  private readonly dbs = new Map<string, Db>();
  private traits: Promise<EngineTraits> | undefined;

  /**
   * Bounds each of the operations below that no query time budget bounds (see db/deadline.ts):
   * each method is one operation as the request sees it, its round trips together under one deadline.
   */
  private readonly deadline: Deadline;
  /** Shared by every streamed read of this process (see batch-bytes.ts). */
  private readonly batchBudget = new BatchBudget();
  private reader: BsonRecordReader<Document> | undefined;
  /** Collections seen to exist: an insert checks the collection first, and this keeps that check off the engine. */
  private readonly knownCollections: TtlCache<string, true>;
  /** Shared by the API processes: a drop through any of them waits until none may still take the collection to exist. */
  private readonly leases: CacheLeases;
  /** Checks under way: when a collection's entry runs out under load, the requests that miss it share one check. */
  private readonly checking: InFlight<string, boolean>;

  constructor(
    private readonly client: MongoClient,
    serviceDb: Db,
    private readonly queryTimeLimitMs: number,
    operationTimeoutMs = DEFAULT_OPERATION_TIMEOUT_MS,
    /** SHARED_CACHE_MS: how long a collection seen to exist is taken to still exist (the leases' time too). */
    cacheMs = COLLECTION_CACHE_MS,
  ) {
    this.knownCollections = new TtlCache(cacheMs, MAX_CACHED_COLLECTIONS);
    this.registry = serviceDb.collection<DatabaseRegistration>('registered_databases');
    // A drop runs under the operation deadline: its mark lapses after it.
    this.leases = new CacheLeases(serviceDb.collection(CACHE_LEASES_COLLECTION), cacheMs, operationTimeoutMs);
    this.deadline = operationDeadline(operationTimeoutMs);
    this.checking = new InFlight(this.deadline);
  }

  private db(name: string): Db {
    let db = this.dbs.get(name);
    if (db === undefined) {
      db = this.client.db(name);
      if (this.dbs.size < MAX_CACHED_DATABASES) this.dbs.set(name, db);
    }
    return db;
  }

  databaseNames(): Promise<string[]> {
    return this.deadline(async (signal) => {
      const [listed, registered] = await Promise.all([
        this.db('admin')
          .admin()
          .listDatabases({ nameOnly: true, ...signalOption(signal) }),
        this.registry.find({}, { projection: { _id: 1 }, signal }).toArray(),
      ]);
      const names = new Set<string>(listed.databases.map((d) => d.name));
      for (const r of registered) names.add(r._id);
      return [...names].sort();
    });
  }

  databaseExists(name: string): Promise<boolean> {
    return this.deadline((signal) => this.databaseKnown(name, signal));
  }

  private async databaseKnown(name: string, signal: AbortSignal): Promise<boolean> {
    if ((await this.registry.countDocuments({ _id: name }, { limit: 1, signal })) > 0) return true;
    const listed = await this.db('admin')
      .admin()
      .listDatabases({ nameOnly: true, filter: { name }, ...signalOption(signal) });
    return listed.databases.some((d) => d.name === name);
  }

  createDatabase(name: string): Promise<void> {
    return this.deadline(async (signal) => {
      if (await this.databaseKnown(name, signal)) throw databaseExists(name);
      try {
        await this.registry.insertOne({ _id: name, created: new Date() }, signalOption(signal));
      } catch (err) {
        if ((err as { code?: number }).code === 11000) throw databaseExists(name);
        throw err;
      }
    });
  }

  /**
   * Drops the database once no API process may take one of its collections to exist (see
   * CacheLeases.whileMarked): an insert of another process never creates one again afterwards.
   */
  async dropDatabase(name: string): Promise<void> {
    if (!(await this.databaseExists(name))) throw noSuchDatabase(name);
    const forget = () => {
      this.knownCollections.deleteWhere((_known, key) => key.startsWith(collectionKey(name, '')));
      this.checking.clear();
    };
    forget();
    await this.leases.whileMarked(databaseScope(name), undefined, () =>
      this.deadline(async (signal) => {
        forget();
        await this.db(name).dropDatabase(signalOption(signal));
        await this.registry.deleteOne({ _id: name }, signalOption(signal));
      }),
    );
  }

  collectionNames(db: string): Promise<string[]> {
    return this.deadline(async (signal) => {
      const infos = await this.db(db).listCollections({}, { nameOnly: true, signal }).toArray();
      return infos
        .map((c) => c.name)
        .filter((n) => !n.startsWith('system.'))
        .sort();
    });
  }

  /**
   * Whether the collection exists: asked of the engine unless seen to exist under a lease that has
   * not run out (at most the cache time, SHARED_CACHE_MS). Once the engine has it, a lease is taken and the
   * engine asked again: what is cached was seen after the lease was recorded.
   * While a drop of the collection or its database is under way (it waits out the leases taken
   * before it), the answer waits for the drop to be done: a write checked now and sent after the
   * drop would create the collection again.
   */
  async collectionExists(db: string, col: string): Promise<boolean> {
    const key = collectionKey(db, col);
    if (this.knownCollections.get(key) === true) return true;
    return this.checking.share(key, async (signal) => {
      // A collection that does not exist gets no lease: names asked for in vain leave nothing behind.
      if (!(await this.collectionKnown(db, col, signal))) return false;
      for (;;) {
        const lease = await this.leases.take(collectionLease(db, col), databaseScope(db));
        if (lease.marked) {
          await sleep(DROP_POLL_MS, undefined, { signal });
          continue;
        }
        const exists = await this.collectionKnown(db, col, signal);
        if (exists && lease.until !== undefined && !signal.aborted) this.knownCollections.set(key, true, lease.until);
        return exists;
      }
    });
  }

  private async collectionKnown(db: string, col: string, signal: AbortSignal): Promise<boolean> {
    const infos = await this.db(db).listCollections({ name: col }, { nameOnly: true, signal }).toArray();
    return infos.length > 0;
  }

  createCollection(db: string, col: string): Promise<void> {
    return this.deadline(async (signal) => {
      if (await this.collectionKnown(db, col, signal)) throw collectionExists(db, col);
      try {
        await this.db(db).createCollection(col, signalOption(signal));
      } catch (err) {
        // 48 = NamespaceExists: another request created it in between.
        if ((err as { code?: number }).code === 48) throw collectionExists(db, col);
        throw err;
      }
    });
  }

  /**
   * Drops the collection once no API process may take it to exist (see CacheLeases.whileMarked):
   * an insert of another process never creates it again afterwards.
   */
  async dropCollection(db: string, col: string): Promise<void> {
    const key = collectionKey(db, col);
    if (!(await this.deadline((signal) => this.collectionKnown(db, col, signal)))) throw noSuchCollection(db, col);
    this.knownCollections.delete(key);
    this.checking.forget(key);
    await this.leases.whileMarked(databaseScope(db), collectionLease(db, col), () =>
      this.deadline(async (signal) => {
        this.knownCollections.delete(key);
        this.checking.forget(key);
        try {
          await this.db(db).collection(col).drop(signalOption(signal));
        } catch (err) {
          // 26 = NamespaceNotFound: dropped meanwhile (by another request).
          if (err instanceof MongoServerError && err.code === 26) throw noSuchCollection(db, col);
          throw err;
        }
      }),
    );
  }

  /** The collection's indexes as the engine lists them, key order kept. */
  listIndexes(db: string, col: string): Promise<Document[]> {
    return this.deadline((signal) => this.collection(db, col).listIndexes(signalOption(signal)).toArray());
  }

  /**
   * Builds an index and answers its name once it exists. The build runs in the engine; this
   * process only awaits the reply, so other requests go on meanwhile. No time limit applies (not
   * even the operation deadline): a large collection may take minutes.
   */
  async createIndex(db: string, col: string, index: IndexDefinition): Promise<string> {
    const spec: IndexSpecification = index.keys;
    // On DocumentDB, a compound index of ordered keys is one index ordered by its whole key only
    // when asked for (see EngineTraits): then it serves sorts and ranges as it does on MongoDB.
    const ordered = index.keys.length > 1 && index.keys.every(([, type]) => type === 1 || type === -1);
    const options: CreateIndexesOptions = ordered ? { ...(await this.engineTraits()).compoundIndexOptions } : {};
    if (index.name !== undefined) options.name = index.name;
    if (index.unique !== undefined) options.unique = index.unique;
    if (index.sparse !== undefined) options.sparse = index.sparse;
    if (index.expireAfterSeconds !== undefined) options.expireAfterSeconds = index.expireAfterSeconds;
    if (index.partialFilterExpression !== undefined) options.partialFilterExpression = index.partialFilterExpression;
    try {
      return await this.collection(db, col).createIndex(spec, options);
    } catch (err) {
      throw indexCommandError(err, index, index.name) ?? err;
    }
  }

  async dropIndex(db: string, col: string, name: string): Promise<void> {
    try {
      await this.deadline((signal) => this.collection(db, col).dropIndex(name, signalOption(signal)));
    } catch (err) {
      throw indexCommandError(err, undefined, name) ?? err;
    }
  }

  /** The first record whose `_id` equals one of `ids` (see firstById), decoded with typed numbers. */
  findById(db: string, col: string, ids: readonly unknown[], projection?: Document): Promise<Document | null> {
    const options = projection === undefined ? TYPED_NUMBERS : { ...TYPED_NUMBERS, projection };
    return this.firstById(db, col, ids, (collection, filter, signal) =>
      typedRead(() => collection.findOne(filter, { ...options, signal })),
    );
  }

  /**
   * As findById, whole records only, handed out still in their bytes: a JSON answer is written
   * straight from them (render/bson-json.ts), and the other formats decode them as a read with
   * typed numbers would.
   */
  findRecordById(db: string, col: string, ids: readonly unknown[]): Promise<BsonRecord<Document> | null> {
    return this.firstById(db, col, ids, async (collection, filter, signal) => {
      // `raw` makes the driver answer the record's BSON (a Buffer) instead of decoding it.
      const bytes = (await collection.findOne(filter, { ...RAW_RECORDS, signal })) as Uint8Array | null;
      return bytes === null ? null : new BsonRecord(bytes, this.readerOf(collection));
    });
  }

  /**
   * The first record whose `_id` equals one of `ids`, tried in order: one equality per id, so each
   * lookup is a point query on the `_id` index. A `$in` over them would be one query, but engines
   * such as FerretDB/DocumentDB plan it as a scan.
   */
  private firstById<T>(
    db: string,
    col: string,
    ids: readonly unknown[],
    findOne: (collection: Collection<Document>, filter: Document, signal: AbortSignal) => Promise<T | null>,
  ): Promise<T | null> {
    const collection = this.collection(db, col);
    return this.deadline(async (signal) => {
      for (const id of ids) {
        const found = await findOne(collection, byId(id), signal);
        if (found !== null) return found;
      }
      return null;
    });
  }

  /** Every collection is opened with the same decoding settings (RECORD_DECODING): one reader serves them all. */
  private readerOf(collection: Collection<Document>): BsonRecordReader<Document> {
    return (this.reader ??= recordReader(collection.bsonOptions));
  }

  /*
   * The writes below take records, replacements and updates as a request body holds them: an
   * integer beyond int32 as a JavaScript number, which each makes the Long the driver stores as
   * an int64 (int64Numbers) as it hands the value over. They are the only writes of user records.
   */

  /** Stores one record and answers its `_id` (the driver assigns one when the record has none). */
  async insertOne(db: string, col: string, record: Document): Promise<unknown> {
    const stored = int64Numbers(record);
    return (await this.deadline((signal) => this.collection(db, col).insertOne(stored, signalOption(signal)))).insertedId;
  }

  /**
   * Stores records in order and answers their ids; a failure part-way, the deadline included,
   * says which were written (see insertBatch). `textBytes`, the length of the records' JSON text
   * when known, splits a large array into commands of about a MB.
   */
  insertMany(db: string, col: string, records: Document[], textBytes?: number): Promise<unknown[]> {
    return insertBatch(this.collection(db, col), records, this.deadline, textBytes);
  }

  /**
   * Replaces the first record whose `_id` is one of `ids` (see firstById) and answers that `_id`,
   * or null when there is none: one operation, which finds the record as it writes it.
   */
  replaceFirstById(db: string, col: string, ids: readonly unknown[], replacement: Document): Promise<unknown> {
    const stored = int64Numbers(replacement);
    return this.firstById(db, col, ids, async (collection, filter, signal) =>
      (await collection.replaceOne(filter, stored, signalOption(signal))).matchedCount > 0 ? (filter._id as unknown) : null,
    );
  }

  /** Applies `update` to the first record whose `_id` is one of `ids` and answers it as it is afterwards, or null. */
  updateFirstById(db: string, col: string, ids: readonly unknown[], update: Document): Promise<Document | null> {
    const stored = int64Numbers(update);
    return this.firstById(db, col, ids, (collection, filter, signal) =>
      typedRead(() => collection.findOneAndUpdate(filter, stored, { ...TYPED_NUMBERS, returnDocument: 'after', ...signalOption(signal) })),
    );
  }

  /** Removes the first record whose `_id` is one of `ids` and answers that `_id`, or null. */
  deleteFirstById(db: string, col: string, ids: readonly unknown[]): Promise<unknown> {
    return this.firstById(db, col, ids, async (collection, filter, signal) =>
      (await collection.deleteOne(filter, signalOption(signal))).deletedCount > 0 ? (filter._id as unknown) : null,
    );
  }

  /** Only the store calls the driver: routes and services speak in names and plain values. */
  /**
   * Regular expressions come back as BSONRegExp, never compiled into a JavaScript RegExp: the
   * engine stores any pattern it is given, and one JavaScript cannot compile (`(?i)abc`, `a++`)
   * made the driver throw while decoding the record, a 500 for each read of it.
   */
  private collection(db: string, col: string): Collection<Document> {
    return this.db(db).collection(col, RECORD_DECODING);
  }

  /** A fresh query time budget for one request's reads (see QueryBudget). */
  budget(): QueryBudget {
    return new QueryBudget(this.queryTimeLimitMs);
  }

  /**
   * Asked once; a failure (engine unreachable, or no answer by the deadline) is not remembered,
   * so the next request asks again.
   */
  private engineTraits(): Promise<EngineTraits> {
    this.traits ??= this.deadline((signal) => detectEngineTraits(this.client, signal)).catch((err: unknown) => {
      this.traits = undefined;
      throw err;
    });
    return this.traits;
  }

  /**
   * Cursor options that put every batch under the time limit: `maxTimeMS` for the first command
   * (and, on MongoDB, the batches after it); on an engine that limits each getMore separately,
   * the same limit as `maxAwaitTimeMS`, which the driver sends as each getMore's maxTimeMS. A
   * page is asked for in one batch (`batchSize`), so it is fetched by the command the engine
   * limits most reliably. Records come as bytes, for the BudgetedCursor to decode one by one.
   */
  private async cursorOptions(maxTimeMS: number, signal: AbortSignal, limit: number) {
    const { limitsEachBatchSeparately } = await this.engineTraits();
    return {
      ...RAW_RECORDS,
      maxTimeMS,
      signal,
      ...(limitsEachBatchSeparately ? { maxAwaitTimeMS: maxTimeMS } : {}),
      ...(limit > 0 ? { batchSize: Math.min(limit, MAX_FIRST_BATCH) } : {}),
    };
  }

  async count(db: string, col: string, filter: Document, budget: QueryBudget): Promise<number> {
    await this.requireGeoIndexes(db, col, filter);
    // A count cannot run $near (see geo-count.ts): it counts the same records another way.
    const counted = countableFilter(filter);
    return budget.run((maxTimeMS, signal) => this.collection(db, col).countDocuments(counted, { maxTimeMS, signal }));
  }

  /**
   * A $near needs a geospatial index on its field; without one the engine's refusal does not say
   * which (MongoDB: "unable to find index for $geoNear query"), so it is asked for here first,
   * naming the index to create. One listing of the indexes, for near queries only.
   */
  private async requireGeoIndexes(db: string, col: string, filter: Document): Promise<void> {
    const fields = nearFields(filter);
    if (fields.length === 0) return;
    // A collection that does not exist has no indexes (and finds nothing anyway).
    const indexes = await this.deadline((signal) => this.collection(db, col).listIndexes(signalOption(signal)).toArray()).catch(
      (err: unknown) => {
        if (err instanceof MongoServerError && err.code === 26) return [];
        throw err;
      },
    );
    const geo = new Set(
      indexes.flatMap((index) =>
        Object.entries((index.key ?? {}) as Record<string, unknown>)
          .filter(([, kind]) => kind === '2dsphere' || kind === '2d')
          .map(([field]) => field),
      ),
    );
    const missing = fields.filter((field) => !geo.has(field));
    if (missing.length > 0) throw missingGeoIndex(missing);
  }

  find(db: string, col: string, options: FindOptions, budget: QueryBudget): BudgetedCursor {
    const collection = this.collection(db, col);
    return new BudgetedCursor(
      async (maxTimeMS, signal) => {
        await this.requireGeoIndexes(db, col, options.filter);
        const cursor = collection.find(options.filter, await this.cursorOptions(maxTimeMS, signal, options.limit));
        if (options.projection !== undefined) cursor.project(options.projection);
        if (options.sort !== undefined) cursor.sort(options.sort);
        if (options.skip > 0) cursor.skip(options.skip);
        if (options.limit > 0) cursor.limit(options.limit);
        return cursor;
      },
      budget,
      this.readerOf(collection),
      this.batchBudget,
    );
  }

  /** `limit`: the number of records the pipeline ends with (its final $limit), 0 = unknown. */
  aggregate(db: string, col: string, pipeline: Document[], budget: QueryBudget, limit = 0): BudgetedCursor {
    const collection = this.collection(db, col);
    return new BudgetedCursor(
      async (maxTimeMS, signal) => collection.aggregate(pipeline, await this.cursorOptions(maxTimeMS, signal, limit)),
      budget,
      this.readerOf(collection),
      this.batchBudget,
    );
  }

  async aggregateCount(db: string, col: string, pipeline: Document[], budget: QueryBudget): Promise<number> {
    // One result row: the first batch holds it, so one limited command does all the work.
    const [row] = await budget.run((maxTimeMS, signal) =>
      this.collection(db, col)
        .aggregate([...pipeline, { $count: 'n' }], { maxTimeMS, signal })
        .toArray(),
    );
    return typeof row?.n === 'number' ? row.n : 0;
  }

  distinct(db: string, col: string, field: string, filter: Document, budget: QueryBudget): Promise<unknown[]> {
    // The driver takes no abort signal for distinct: past the deadline its answer is simply not awaited.
    return budget.run((maxTimeMS) => typedRead(() => this.collection(db, col).distinct(field, filter, { ...TYPED_NUMBERS, maxTimeMS })));
  }

  /**
   * Applies `update` to every record `filter` matches and answers how many matched and how many
   * it changed. A write, so no query time budget: it runs until the engine is done. The filter is
   * a URL parameter's (plain numbers, compared by value) and goes to the driver as it is.
   */
  async updateMatching(db: string, col: string, filter: Document, update: Document): Promise<{ matched: number; modified: number }> {
    const result = await this.collection(db, col).updateMany(filter, int64Numbers(update));
    return { matched: result.matchedCount, modified: result.modifiedCount };
  }

  /** Removes every record `filter` matches and answers how many were removed. */
  async deleteMatching(db: string, col: string, filter: Document): Promise<number> {
    return (await this.collection(db, col).deleteMany(filter)).deletedCount;
  }
}
