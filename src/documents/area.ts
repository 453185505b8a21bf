/**
 * One engine, two mounts: the data store and the catalog differ only in which databases they
 * show, which permission codenames guard them and whether databases can be created.
 */
import type { Db, MongoClient } from 'mongodb';
import type { Settings } from '../config/settings.js';
import type { DocumentArea as AreaName, ReadPolicy } from '../auth/permissions.js';
import { DocumentStore } from './store.js';
import { HeavyQueryLimiter } from './heavy-queries.js';
import { isReservedDatabase } from './names.js';

/** Told about databases created and deleted through the API (the service keeps the workers' database role in step). */
export interface DatabaseHooks {
  created(db: string): Promise<void>;
  dropped(db: string): Promise<void>;
}

const NO_HOOKS: DatabaseHooks = { created: async () => undefined, dropped: async () => undefined };

export class DocumentArea {
  databaseHooks: DatabaseHooks = NO_HOOKS;

  constructor(
    readonly name: AreaName,
    readonly store: DocumentStore,
    readonly policy: ReadPolicy,
    /** Which database names belong to this area. */
    private readonly owns: (db: string) => boolean,
    /** Databases always shown (the catalog databases exist by configuration). */
    private readonly fixedDatabases: readonly string[],
    readonly canCreateDatabases: boolean,
    /** Shared by both areas: the engine they would overload is the same. */
    readonly heavyQueries: HeavyQueryLimiter,
  ) {}

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

export function createDocumentAreas(
  settings: Settings,
  mongo: MongoClient,
  serviceDb: Db,
): { dataStore: DocumentArea; catalog: DocumentArea } {
  const store = new DocumentStore(mongo, serviceDb, settings.mongo.queryTimeLimitMs);
  const heavyQueries = new HeavyQueryLimiter({
    perCaller: settings.heavyQueriesPerUser,
    total: settings.heavyQueriesTotal,
    timeLimitMs: settings.mongo.queryTimeLimitMs,
  });
  const internal = [settings.serviceDatabase];
  const catalogNames = settings.catalogDatabases;
  const isCatalog = (db: string): boolean => catalogNames.includes(db);
  // MongoDB refuses two databases whose names differ only in case, so "Catalog" can only ever be
  // the catalog database (or fail): never the data store's.
  const isCatalogInAnyCase = (db: string): boolean => catalogNames.some((name) => name.toLowerCase() === db.toLowerCase());
  const safeRequired = new Set(settings.safeMethodPermRequired);
  const dataStore = new DocumentArea(
    'data_store',
    store,
    { anonymousRead: settings.dataStoreAnonymous, safeMethodPermRequired: safeRequired },
    (db) => !isReservedDatabase(db, internal) && !isCatalogInAnyCase(db),
    [],
    true,
    heavyQueries,
  );
  const catalog = new DocumentArea(
    'catalog',
    store,
    { anonymousRead: settings.catalogAnonymous, safeMethodPermRequired: safeRequired },
    (db) => isCatalog(db) && !isReservedDatabase(db, internal),
    catalogNames.filter((db) => !isReservedDatabase(db, internal)),
    false,
    heavyQueries,
  );
  return { dataStore, catalog };
}
