/**
 * What the document API of one area does, given who asks and the parsed request, in plain values:
 * - collection reads: checks the combination and the permissions of every collection the read
 *   touches, and returns the rows as a count and a cursor (or, for a single-field distinct, the
 *   values). All database work of one read shares one query time budget; heavy reads also hold
 *   a slot of the caller's share while their rows are delivered;
 * - records: inserts, and reads, replaces, merges and removes one record by its id;
 * - databases, collections and indexes: lists, creates and drops them.
 * HTTP (parameters, bodies, paging, rendering) stays in the routes.
 */
import type { Document } from 'mongodb';
import { canAccessCollection, canManageContainers, canSeeCollection, canSeeDatabase, type DocumentAction } from '../auth/permissions.js';
import type { Principal } from '../auth/principal.js';
import { badRequest, forbidden } from '../errors.js';
import type { DocumentArea } from './area.js';
import type { BsonRecord } from '../render/bson-record.js';
import type { BudgetedCursor } from './budgeted-cursor.js';
import { indexExists, noSuchCollection, noSuchDatabase, noSuchIndex, noSuchRecord, reservedDatabase } from './errors.js';
import { denied, requireCollection, requireListDatabases, requireManage, requireSeeDatabase } from './guards.js';
import { describeIndex, ID_INDEX, type IndexDefinition } from './index-spec.js';
import { isHeavyRead } from './heavy-reads.js';
import { lookupTargets } from './operators.js';
import {
  buildAggregationPipeline,
  buildDistinctPipeline,
  distinctRowToObject,
  recordIdCandidates,
  validateRecordId,
  type CollectionQuery,
} from './query-params.js';
import type { QueryBudget } from './query-budget.js';
import { assertStorableRecord } from './record-rules.js';
import { isVouchedStorable } from './extended-json.js';
import { isInt64Free, vouchInt64Free } from './int64-numbers.js';
import { mergeUpdate, replacementFor } from './record-writes.js';

/**
 * Throws the 404 of a missing collection or database. Reads (collection views, the record
 * operations) call it only after finding nothing, since anything found proves the collection exists.
 */
export type WhenEmpty = () => Promise<void>;

/** A collection named in a request, its names already validated and the caller's permission checked. */
export interface CollectionTarget {
  db: string;
  col: string;
  /** Throws the 404 of a missing collection (or database); called only when nothing was found. */
  whenEmpty: WhenEmpty;
}

/** Creating and deleting the databases and collections of an area (see DocumentService.containers). */
export interface ContainerManager {
  createDatabase(db: string): Promise<void>;
  dropDatabase(db: string): Promise<void>;
  createCollection(db: string, col: string): Promise<void>;
  dropCollection(db: string, col: string): Promise<void>;
}

/** What a collection read asks for, parsed from the request. */
export interface CollectionRead {
  query?: CollectionQuery;
  pipeline?: Document[];
  distinctFields?: string[];
}

/** Who reads, for the limits of their share (heavy-queries.ts, streamed-reads.ts). */
export interface ReadCaller {
  /** The caller's key: the user's, or for anonymous callers the client address's. */
  key: string;
  /** Whether the answer streams (see isStreamedRead) rather than being one bounded page. */
  streamed: boolean;
}

/** Which rows of the result to read. */
export interface RowWindow {
  skip: number;
  /** 0 = no limit. */
  limit: number;
}

/** The result of a read: a count and a cursor opened per window, or the values of a single-field distinct. */
export type CollectionRows =
  | { values: readonly unknown[] }
  | { count: Promise<number>; open(window: RowWindow): BudgetedCursor; mapRow?: (row: BsonRecord<Document>) => unknown };

interface PlannedRead {
  heavy: boolean;
  rows(budget: QueryBudget): CollectionRows | Promise<CollectionRows>;
}

/**
 * A count started when first asked for, not when the rows are planned: a caller that reads only a
 * window (the explorer counts separately, with a cap) never makes the engine count every match.
 */
function countedRows(
  startCount: () => Promise<number>,
  open: (window: RowWindow) => BudgetedCursor,
  mapRow?: (row: BsonRecord<Document>) => unknown,
): CollectionRows {
  let counted: Promise<number> | undefined;
  return {
    get count() {
      return (counted ??= startCount());
    },
    open,
    ...(mapRow === undefined ? {} : { mapRow }),
  };
}

function pagingStages(window: RowWindow): Document[] {
  const stages: Document[] = [];
  if (window.skip > 0) stages.push({ $skip: window.skip });
  if (window.limit > 0) stages.push({ $limit: window.limit });
  return stages;
}

export class DocumentService {
  constructor(readonly area: DocumentArea) {}

  /**
   * The collection, when `principal` may perform `action` on it and it lies in a database this
   * area owns. Its existence is checked lazily (see CollectionTarget.whenEmpty): querying a
   * collection that does not exist finds nothing and creates nothing, and any record found
   * proves it exists, so the existence query runs only when nothing was found.
   */
  target(principal: Principal, db: string, col: string, action: DocumentAction): CollectionTarget {
    requireCollection(principal, this.area, db, col, action);
    if (!this.area.ownsDatabase(db)) throw noSuchDatabase(db);
    return { db, col, whenEmpty: () => this.requireExisting(db, col) };
  }

  /** 404 unless the collection exists. A collection implies its database: one round trip, two only for a 404. */
  async requireExisting(db: string, col: string): Promise<void> {
    if (await this.area.store.collectionExists(db, col)) return;
    if (!(await this.area.databaseExists(db))) throw noSuchDatabase(db);
    throw noSuchCollection(db, col);
  }

  /** Stores one record and answers its `_id`. The collection must exist (requireExisting): an insert would create it. */
  async insert({ db, col }: CollectionTarget, record: unknown): Promise<unknown> {
    return this.area.store.insertOne(db, col, assertStorableRecord(record, 'The record', isVouchedStorable(record)));
  }

  /**
   * Stores records in order and answers their ids; a failure part-way says which were written
   * (see insertBatch). The collection must exist (requireExisting). `textBytes`: the length of
   * the JSON text the records were read from, when known (it sizes the insert commands).
   */
  async insertMany({ db, col }: CollectionTarget, records: readonly unknown[], textBytes?: number): Promise<unknown[]> {
    if (records.length === 0) throw badRequest('empty_array', 'The array of records is empty.');
    // A body whose keys the parser already saw to be storable is not walked again.
    const keysChecked = isVouchedStorable(records);
    const docs = records.map((record, i) => assertStorableRecord(record, `Record ${i}`, keysChecked));
    // The same records: what the parser found of their numbers holds of them still.
    if (isInt64Free(records)) vouchInt64Free(docs);
    return this.area.store.insertMany(db, col, docs, textBytes);
  }

  /** The record `id` names (see recordIdCandidates), or the 404 of the record, its collection or its database. */
  async get(target: CollectionTarget, id: string): Promise<BsonRecord<Document>> {
    return this.found(target, id, (ids) => this.area.store.findRecordById(target.db, target.col, ids));
  }

  /**
   * Replaces the record `id` names by `record` (which keeps its `_id`), and answers the record as
   * stored. Each of these writes by id is one operation when the record exists.
   */
  async replace(target: CollectionTarget, id: string, record: unknown): Promise<Document> {
    const doc = assertStorableRecord(record, 'The record');
    // Which _id the record turns out to have does not change the replacement (the check compares text).
    const replacement = replacementFor(doc, id);
    const replaced = await this.found(target, id, (ids) => this.area.store.replaceFirstById(target.db, target.col, ids, replacement));
    return { _id: replaced, ...replacement };
  }

  /** Merges `changes` (plain fields, or update operators, see mergeUpdate) into the record `id` names, and answers the record as it is afterwards. */
  async merge(target: CollectionTarget, id: string, changes: unknown): Promise<Document> {
    const update = mergeUpdate(changes);
    return this.found(target, id, (ids) => this.area.store.updateFirstById(target.db, target.col, ids, update));
  }

  /** Removes the record `id` names and answers its `_id`. */
  async remove(target: CollectionTarget, id: string): Promise<unknown> {
    return this.found(target, id, (ids) => this.area.store.deleteFirstById(target.db, target.col, ids));
  }

  /**
   * The record a URL id names, looked up as each type the id may stand for (an ObjectId for 24 hex
   * digits, then the string) by `lookup`; when there is none, the 404 of a missing collection or
   * database, else of the record.
   */
  private async found<T>(target: CollectionTarget, id: string, lookup: (ids: unknown[]) => Promise<T | null>): Promise<T> {
    const record = await lookup(recordIdCandidates(validateRecordId(id)));
    if (record !== null) return record;
    await target.whenEmpty();
    throw noSuchRecord(id);
  }

  /**
   * Creating and deleting the area's databases and collections, for whoever may manage them (401
   * or 403 otherwise). Asked for before a request's body is read, so that a caller who may not
   * manage them is refused whatever the body holds.
   */
  containers(principal: Principal): ContainerManager {
    requireManage(principal, this.area);
    const { area } = this;
    const { store } = area;
    const requireOwned = (db: string): void => {
      if (!area.ownsDatabase(db)) throw reservedDatabase(db);
    };
    const requireDatabase = async (db: string): Promise<void> => {
      if (!(await area.databaseExists(db))) throw noSuchDatabase(db);
    };
    return {
      async createDatabase(db) {
        requireOwned(db);
        await store.createDatabase(db);
        await area.databaseHooks.created(db);
      },
      async dropDatabase(db) {
        requireOwned(db);
        await store.dropDatabase(db);
        await area.databaseHooks.dropped(db);
      },
      async createCollection(db, col) {
        await requireDatabase(db);
        await store.createCollection(db, col);
      },
      async dropCollection(db, col) {
        await requireDatabase(db);
        await store.dropCollection(db, col);
      },
    };
  }

  /** The area's databases `principal` may see, by name. */
  async databaseNames(principal: Principal): Promise<string[]> {
    requireListDatabases(principal, this.area);
    return (await this.area.databaseNames()).filter((db) => canSeeDatabase(principal, this.area.name, db, this.area.policy));
  }

  /** The collections of `db` that `principal` may see, by name (404 when the database does not exist). */
  async collectionNames(principal: Principal, db: string): Promise<string[]> {
    requireSeeDatabase(principal, this.area, db);
    if (!(await this.area.databaseExists(db))) throw noSuchDatabase(db);
    return (await this.area.store.collectionNames(db)).filter((col) =>
      canSeeCollection(principal, this.area.name, db, col, this.area.policy),
    );
  }

  /**
   * Whether `principal` holds the area-wide right that creating and dropping indexes needs (the
   * admin page shows its forms by it); each index command also needs what requireIndexManager asks.
   */
  mayManageIndexes(principal: Principal): boolean {
    return canManageContainers(principal, this.area.name);
  }

  /** The collection's indexes; reading them needs read permission on the collection. */
  async listIndexes(principal: Principal, db: string, col: string): Promise<Document[]> {
    this.target(principal, db, col, 'safe');
    await this.requireExisting(db, col);
    return (await this.area.store.listIndexes(db, col)).map(describeIndex);
  }

  /**
   * Creates an index, for an index manager of the collection (requireIndexManager). A TTL index
   * deletes the records it covers once they are old enough, for as long as it exists: only
   * those who may delete every record of the collection may make one.
   */
  async createIndex(principal: Principal, db: string, col: string, index: IndexDefinition): Promise<string> {
    this.requireIndexManager(principal, db, col);
    if (index.expireAfterSeconds !== undefined && !canAccessCollection(principal, this.area.name, db, col, 'delete', this.area.policy)) {
      throw forbidden(
        `An index with "expireAfterSeconds" deletes records of "${col}"; it needs the permission to delete them.`,
        'forbidden_ttl_index',
      );
    }
    await this.requireExisting(db, col);
    if (index.name !== undefined && (await this.indexNames(db, col)).includes(index.name)) {
      throw indexExists(`An index named "${index.name}" already exists on "${col}".`);
    }
    return this.area.store.createIndex(db, col, index);
  }

  async dropIndex(principal: Principal, db: string, col: string, name: string): Promise<void> {
    this.requireIndexManager(principal, db, col);
    if (name === ID_INDEX) throw badRequest('invalid_index', 'The "_id_" index cannot be dropped.');
    await this.requireExisting(db, col);
    // Looked up first: the engine reads some names ("*") as "every index".
    if (!(await this.indexNames(db, col)).includes(name)) throw noSuchIndex(name, col);
    await this.area.store.dropIndex(db, col, name);
  }

  /**
   * Index commands are for whoever may create and delete the area's collections (an index
   * changes what can be written, and a build loads the engine) and may also read the collection:
   * a build reads every record, and what it answers (a refusal, a duplicate) tells of them.
   */
  private requireIndexManager(principal: Principal, db: string, col: string): void {
    requireManage(principal, this.area);
    this.target(principal, db, col, 'safe');
  }

  private async indexNames(db: string, col: string): Promise<string[]> {
    return (await this.area.store.listIndexes(db, col)).map((index) => String(index.name));
  }

  /**
   * Runs `deliver` on the rows of the read. Everything that can be refused as bad input is refused
   * before a slot of the caller's is taken: a heavy-read slot for a heavy read, a streamed-read
   * slot for a streamed one (both limit the caller, see heavy-queries.ts and streamed-reads.ts).
   * The slots are given back when `deliver` ends, also after an error, a client that went away or
   * one that stopped reading (the handler ends within the time limit or, while streaming, as soon
   * as the closed connection is noticed or the send timeout cuts it).
   */
  async readCollection<T>(
    principal: Principal,
    caller: ReadCaller,
    target: CollectionTarget,
    read: CollectionRead,
    deliver: (rows: CollectionRows) => Promise<T>,
  ): Promise<T> {
    const planned = this.planRead(principal, target, read);
    const releaseHeavy = planned.heavy ? this.area.heavyQueries.acquire(caller.key) : undefined;
    let releaseStream: (() => void) | undefined;
    try {
      releaseStream = caller.streamed ? this.area.streamedReads.acquire(caller.key) : undefined;
      return await deliver(await planned.rows(this.area.store.budget()));
    } finally {
      releaseStream?.();
      releaseHeavy?.();
    }
  }

  /** Checks the read (throwing its 4xx) and returns the database work to do. */
  private planRead(
    principal: Principal,
    { db, col }: CollectionTarget,
    { query, pipeline, distinctFields: fields }: CollectionRead,
  ): PlannedRead {
    const { area } = this;
    const { store } = area;
    const filter = query?.filter ?? {};
    const heavy = isHeavyRead({ pipeline, distinctFields: fields, filter });

    if (pipeline !== undefined && fields !== undefined) {
      throw badRequest('invalid_combination', 'Use either "distinct" or "aggregate", not both.');
    }
    if ((pipeline !== undefined || fields !== undefined) && (query?.projection !== undefined || query?.sort !== undefined)) {
      throw badRequest(
        'invalid_combination',
        'With "distinct" or "aggregate" only the "filter" of "query" applies; put projections and sorting into the pipeline.',
      );
    }

    if (pipeline !== undefined) {
      const full = buildAggregationPipeline(query, pipeline);
      for (const target of lookupTargets(full)) {
        if (!canAccessCollection(principal, area.name, db, target, 'safe', area.policy)) {
          const err = denied(principal);
          throw err.status === 403
            ? forbidden(`The pipeline reads collection "${target}", which you may not read.`, 'forbidden_lookup')
            : err;
        }
      }
      return {
        heavy,
        rows: (budget) =>
          countedRows(
            () => store.aggregateCount(db, col, full, budget),
            (window) => store.aggregate(db, col, [...full, ...pagingStages(window)], budget, window.limit),
          ),
      };
    }

    if (fields !== undefined && fields.length === 1) {
      // The distinct command unwinds arrays like MongoDB users expect; its result is bounded (16 MB).
      const field = fields[0] as string;
      return { heavy, rows: async (budget) => ({ values: await store.distinct(db, col, field, filter, budget) }) };
    }

    if (fields !== undefined) {
      const distinctPipeline = buildDistinctPipeline(filter, fields);
      return {
        heavy,
        rows: (budget) =>
          countedRows(
            () => store.aggregateCount(db, col, distinctPipeline, budget),
            (window) => store.aggregate(db, col, [...distinctPipeline, ...pagingStages(window)], budget, window.limit),
            // Decoded as the renderers decode records: a double stays one (BsonRecord.decodeTyped).
            (row) => distinctRowToObject(row.decodeTyped(), fields),
          ),
      };
    }

    return {
      heavy,
      rows: (budget) =>
        countedRows(
          () => store.count(db, col, filter, budget),
          (window) =>
            store.find(
              db,
              col,
              { filter, projection: query?.projection, sort: query?.sort, skip: window.skip, limit: window.limit },
              budget,
            ),
        ),
    };
  }
}
