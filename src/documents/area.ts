/**
 * One engine, two mounts: the data store and the catalog differ only in which databases they
 * show, which permission codenames guard them and whether databases can be created.
 */
import type { Db, MongoClient } from 'mongodb';
import type { Settings } from '../config/settings.js';
import type { AreaName, ReadPolicy } from '../auth/permissions.js';
import { DocumentStore } from './store.js';
import { HeavyQueryLimiter } from './heavy-queries.js';
import { StreamedReadLimiter } from './streamed-reads.js';
import { isReservedDatabase } from '../db/names.js';

/** Told about databases created and deleted through the API (the service keeps the workers' database role in step). */
export interface DatabaseHooks {
  created(db: string): Promise<void>;
  dropped(db: string): Promise<void>;
}

const NO_HOOKS: DatabaseHooks = { created: async () => undefined, dropped: async () => undefined };

/** What distinguishes an area; everything but the hooks is required. */
export interface DocumentAreaOptions {
  name: AreaName;
  store: DocumentStore;
  policy: ReadPolicy;
  /** Which database names belong to this area. */
  owns: (db: string) => boolean;
  /** Databases always shown (the catalog databases exist by configuration). */
  fixedDatabases: readonly string[];
  canCreateDatabases: boolean;
  /** Shared by both areas: the engine they would overload is the same. */
  heavyQueries: HeavyQueryLimiter;
  /** Shared by both areas: a caller's streams count together, wherever they read. */
  streamedReads: StreamedReadLimiter;
  databaseHooks?: DatabaseHooks;
}

export class DocumentArea {
  readonly name: AreaName;
  readonly store: DocumentStore;
  readonly policy: ReadPolicy;
  readonly canCreateDatabases: boolean;
  readonly heavyQueries: HeavyQueryLimiter;
  readonly streamedReads: StreamedReadLimiter;
  readonly databaseHooks: DatabaseHooks;
  private readonly owns: (db: string) => boolean;
  private readonly fixedDatabases: readonly string[];

  constructor(options: DocumentAreaOptions) {
    this.name = options.name;
    this.store = options.store;
    this.policy = options.policy;
    this.canCreateDatabases = options.canCreateDatabases;
    this.heavyQueries = options.heavyQueries;
    this.streamedReads = options.streamedReads;
    this.databaseHooks = options.databaseHooks ?? NO_HOOKS;
    this.owns = options.owns;
    this.fixedDatabases = options.fixedDatabases;
  }

  ownsDatabase(db: string): boolean {
    return this.owns(db);
  }

  async databaseNames(): Promise<string[]> {
    const names = new Set((await this.store.databaseNames()).filter((n) => this.owns(n)));
    for (const f of this.fixedDatabases) names.add(f);
    return [...names].sort();
  }

  async databaseExists(db: string): Promise<boolean> {
    return this.owns(db) && (this.fixedDatabases.includes(db) || (await this.store.databaseExists(db)));
  }
}

export interface DocumentAreasOptions {
  settings: Settings;
  mongo: MongoClient;
  serviceDb: Db;
  /** Told about the data store's databases created and deleted through the API. */
  dataStoreHooks?: DatabaseHooks;
}

export function createDocumentAreas({ settings, mongo, serviceDb, dataStoreHooks }: DocumentAreasOptions): {
  dataStore: DocumentArea;
  catalog: DocumentArea;
} {
  const store = new DocumentStore(
    mongo,
    serviceDb,
    settings.mongo.queryTimeLimitMs,
    settings.mongo.operationTimeoutMs,
    settings.sharedCacheMs,
  );
  const heavyQueries = new HeavyQueryLimiter({
    perCaller: settings.heavyQueriesPerUser,
    total: settings.heavyQueriesTotal,
    timeLimitMs: settings.mongo.queryTimeLimitMs,
  });
  const streamedReads = new StreamedReadLimiter(settings.streamedReadsPerUser);
  const internal = [settings.serviceDatabase];
  const catalogNames = settings.catalogDatabases;
  const isCatalog = (db: string): boolean => catalogNames.includes(db);
  // MongoDB refuses two databases whose names differ only in case, so "Catalog" can only ever be
  // the catalog database (or fail): never the data store's.
  const isCatalogInAnyCase = (db: string): boolean => catalogNames.some((name) => name.toLowerCase() === db.toLowerCase());
  const safeRequired = new Set(settings.safeMethodPermRequired);
  const dataStore = new DocumentArea({
    name: 'data_store',
    store,
    policy: { anonymousRead: settings.dataStoreAnonymous, safeMethodPermRequired: safeRequired },
    owns: (db) => !isReservedDatabase(db, internal) && !isCatalogInAnyCase(db),
    fixedDatabases: [],
    canCreateDatabases: true,
    heavyQueries,
    streamedReads,
    databaseHooks: dataStoreHooks,
  });
  const catalog = new DocumentArea({
    name: 'catalog',
    store,
    policy: { anonymousRead: settings.catalogAnonymous, safeMethodPermRequired: safeRequired },
    owns: (db) => isCatalog(db) && !isReservedDatabase(db, internal),
    fixedDatabases: catalogNames.filter((db) => !isReservedDatabase(db, internal)),
    canCreateDatabases: false,
    heavyQueries,
    streamedReads,
  });
  return { dataStore, catalog };
}
