/**
 * The repository for user documents: the only code that touches the driver for catalog and
 * data-store data. Routes speak in names and validated queries; this speaks MongoDB.
 */
import { type AggregationCursor, type Collection, type Db, type Document, type FindCursor, type MongoClient } from 'mongodb';
import { conflict, notFound } from '../errors.js';

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

/** Enough for every database of a research group; names beyond it are simply not cached. */
const MAX_CACHED_DATABASES = 1_000;

export class DocumentStore {
  private readonly registry: Collection<DatabaseRegistration>;
  /** client.db() resolves its options on every call, a measurable cost at several calls per request. */
  private readonly dbs = new Map<string, Db>();

  constructor(
    private readonly client: MongoClient,
    serviceDb: Db,
    private readonly queryTimeLimitMs: number,
  ) {
    this.registry = serviceDb.collection<DatabaseRegistration>('registered_databases');
  }

  private db(name: string): Db {
    let db = this.dbs.get(name);
    if (db === undefined) {
      db = this.client.db(name);
      if (this.dbs.size < MAX_CACHED_DATABASES) this.dbs.set(name, db);
    }
    return db;
  }

  async databaseNames(): Promise<string[]> {
    const [listed, registered] = await Promise.all([
      this.db('admin').admin().listDatabases({ nameOnly: true }),
      this.registry.find({}, { projection: { _id: 1 } }).toArray(),
    ]);
    const names = new Set<string>(listed.databases.map((d) => d.name));
    for (const r of registered) names.add(r._id);
    return [...names].sort();
  }

  async databaseExists(name: string): Promise<boolean> {
    if ((await this.registry.countDocuments({ _id: name }, { limit: 1 })) > 0) return true;
    const listed = await this.db('admin').admin().listDatabases({ nameOnly: true, filter: { name } });
    return listed.databases.some((d) => d.name === name);
  }

  async createDatabase(name: string): Promise<void> {
    if (await this.databaseExists(name)) throw conflict(`Database "${name}" already exists.`, 'database_exists');
    try {
      await this.registry.insertOne({ _id: name, created: new Date() });
    } catch (err) {
      if ((err as { code?: number }).code === 11000) throw conflict(`Database "${name}" already exists.`, 'database_exists');
      throw err;
    }
  }

  async dropDatabase(name: string): Promise<void> {
    if (!(await this.databaseExists(name))) throw notFound(`Database "${name}" does not exist.`, 'no_such_database');
    await this.db(name).dropDatabase();
    await this.registry.deleteOne({ _id: name });
  }

  async collectionNames(db: string): Promise<string[]> {
    const infos = await this.db(db).listCollections({}, { nameOnly: true }).toArray();
    return infos.map((c) => c.name).filter((n) => !n.startsWith('system.')).sort();
  }

  async collectionExists(db: string, col: string): Promise<boolean> {
    const infos = await this.db(db).listCollections({ name: col }, { nameOnly: true }).toArray();
    return infos.length > 0;
  }

  async createCollection(db: string, col: string): Promise<void> {
    if (await this.collectionExists(db, col)) {
      throw conflict(`Collection "${col}" already exists in "${db}".`, 'collection_exists');
    }
    try {
      await this.db(db).createCollection(col);
    } catch (err) {
      // 48 = NamespaceExists: another request created it in between.
      if ((err as { code?: number }).code === 48) throw conflict(`Collection "${col}" already exists in "${db}".`, 'collection_exists');
      throw err;
    }
  }

  async dropCollection(db: string, col: string): Promise<void> {
    if (!(await this.collectionExists(db, col))) {
      throw notFound(`Collection "${col}" does not exist in "${db}".`, 'no_such_collection');
    }
    await this.db(db).collection(col).drop();
  }

  collection(db: string, col: string): Collection<Document> {
    return this.db(db).collection(col);
  }

  count(db: string, col: string, filter: Document): Promise<number> {
    return this.collection(db, col).countDocuments(filter, { maxTimeMS: this.queryTimeLimitMs });
  }

  find(db: string, col: string, options: FindOptions): FindCursor<Document> {
    const cursor = this.collection(db, col).find(options.filter, { maxTimeMS: this.queryTimeLimitMs });
    if (options.projection !== undefined) cursor.project(options.projection);
    if (options.sort !== undefined) cursor.sort(options.sort);
    if (options.skip > 0) cursor.skip(options.skip);
    if (options.limit > 0) cursor.limit(options.limit);
    return cursor;
  }

  aggregate(db: string, col: string, pipeline: Document[]): AggregationCursor<Document> {
    return this.collection(db, col).aggregate(pipeline, { maxTimeMS: this.queryTimeLimitMs });
  }

  async aggregateCount(db: string, col: string, pipeline: Document[]): Promise<number> {
    const [row] = await this.aggregate(db, col, [...pipeline, { $count: 'n' }]).toArray();
    return typeof row?.n === 'number' ? row.n : 0;
  }

  async distinct(db: string, col: string, field: string, filter: Document): Promise<unknown[]> {
    return this.collection(db, col).distinct(field, filter, { maxTimeMS: this.queryTimeLimitMs });
  }
}
