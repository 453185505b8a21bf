/**
 * The record and container operations of DocumentService: what each answers, which 404 a missing
 * record gets, and that a refused body is refused before the store is asked. The store is a small
 * in-memory stand-in (the real one is exercised by the integration tests).
 */
import { BSON, ObjectId, type Document } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { DocumentArea, type DatabaseHooks } from '../../../src/documents/area.js';
import { DocumentService, type CollectionTarget } from '../../../src/documents/document-service.js';
import { HeavyQueryLimiter } from '../../../src/documents/heavy-queries.js';
import { StreamedReadLimiter } from '../../../src/documents/streamed-reads.js';
import type { DocumentStore } from '../../../src/documents/store.js';
import { recordReader } from '../../../src/documents/raw-records.js';
import { BsonRecord } from '../../../src/render/bson-record.js';
import { GrantSet } from '../../../src/auth/grant-set.js';
import { ANONYMOUS, type Principal } from '../../../src/auth/principal.js';
import { ApiError } from '../../../src/errors.js';
import { asAnswer } from './api-error.js';

/** One collection's records, and what the service asked of the store. */
class RecordsStandIn {
  readonly records: Document[] = [];
  readonly calls: string[] = [];
  readonly createdDatabases: string[] = [];

  findById = async (_db: string, _col: string, ids: readonly unknown[]): Promise<Document | null> => {
    this.calls.push('findById');
    for (const id of ids) {
      const found = this.records.find((r) => String(r._id) === String(id) && typeof r._id === typeof id);
      if (found !== undefined) return { ...found };
    }
    return null;
  };
  findRecordById = async (db: string, col: string, ids: readonly unknown[]): Promise<BsonRecord<Document> | null> => {
    const found = await this.findById(db, col, ids);
    return found === null ? null : new BsonRecord(BSON.serialize(found), recordReader({}));
  };
  insertOne = async (_db: string, _col: string, record: Document): Promise<unknown> => {
    this.calls.push('insertOne');
    const stored = { _id: new ObjectId(), ...record };
    this.records.push(stored);
    return stored._id;
  };
  insertMany = async (db: string, col: string, records: Document[]): Promise<unknown[]> =>
    Promise.all(records.map((r) => this.insertOne(db, col, r)));
  /** The first record one of `ids` names, as findById matches them. */
  private indexOf(ids: readonly unknown[]): number {
    for (const id of ids) {
      const i = this.records.findIndex((r) => String(r._id) === String(id) && typeof r._id === typeof id);
      if (i >= 0) return i;
    }
    return -1;
  }
  replaceFirstById = async (_db: string, _col: string, ids: readonly unknown[], replacement: Document): Promise<unknown> => {
    this.calls.push('replaceFirstById');
    const i = this.indexOf(ids);
    if (i < 0) return null;
    const id: unknown = this.records[i]?._id;
    this.records[i] = { _id: id, ...replacement };
    return id;
  };
  updateFirstById = async (_db: string, _col: string, ids: readonly unknown[], update: Document): Promise<Document | null> => {
    this.calls.push('updateFirstById');
    const record = this.records[this.indexOf(ids)];
    return record === undefined ? null : { ...Object.assign(record, update.$set) };
  };
  deleteFirstById = async (_db: string, _col: string, ids: readonly unknown[]): Promise<unknown> => {
    this.calls.push('deleteFirstById');
    const i = this.indexOf(ids);
    return i < 0 ? null : this.records.splice(i, 1)[0]?._id;
  };
  createDatabase = async (db: string): Promise<void> => {
    this.createdDatabases.push(db);
  };
}

function serviceOver(store: RecordsStandIn, databaseHooks?: DatabaseHooks): DocumentService {
  const area = new DocumentArea({
    name: 'data_store',
    store: store as unknown as DocumentStore,
    policy: { anonymousRead: false, safeMethodPermRequired: new Set() },
    owns: (db) => db !== 'cybercom',
    fixedDatabases: [],
    canCreateDatabases: true,
    heavyQueries: new HeavyQueryLimiter({ perCaller: 1, total: 1, timeLimitMs: 1_000 }),
    streamedReads: new StreamedReadLimiter(1),
    databaseHooks,
  });
  return new DocumentService(area);
}

const admin: Principal = {
  authMethod: 'token',
  userId: '65f000000000000000000001',
  username: 'admin',
  isSuperuser: false,
  isStaff: false,
  permissions: new Set(['data_store.datastore_admin']),
  grants: GrantSet.fromCodenames(['data_store.datastore_admin']),
};

/** A target whose collection exists unless `missing`, as DocumentService.target builds it. */
function target(missing = false): CollectionTarget {
  return {
    db: 'lab',
    col: 'samples',
    whenEmpty: async () => {
      if (missing) throw new ApiError(404, 'no_such_collection', 'gone');
    },
  };
}

async function rejection(promise: Promise<unknown>): Promise<ApiError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (err === undefined) throw new Error('expected a rejection, but the call resolved');
  return asAnswer(err);
}

describe('DocumentService records', () => {
  it('inserts one record or several, answering their ids', async () => {
    const store = new RecordsStandIn();
    const documents = serviceOver(store);
    const id = await documents.insert(target(), { a: 1 });
    const ids = await documents.insertMany(target(), [{ b: 2 }, { c: 3 }]);
    expect(store.records.map((r) => r._id)).toEqual([id, ...ids]);
  });

  it('refuses an empty array and names the record that cannot be stored, before writing any', async () => {
    const store = new RecordsStandIn();
    const documents = serviceOver(store);
    expect(await rejection(documents.insertMany(target(), []))).toMatchObject({ code: 'empty_array' });
    expect(await rejection(documents.insertMany(target(), [{ a: 1 }, 'x']))).toMatchObject({
      code: 'invalid_body',
      message: 'Record 1 must be a JSON object.',
    });
    expect(store.calls).toEqual([]);
  });

  it('finds a record by the ObjectId a 24-hex id stands for, or by the string', async () => {
    const store = new RecordsStandIn();
    const oid = new ObjectId();
    store.records.push({ _id: oid, kind: 'oid' }, { _id: 'plain', kind: 'string' });
    const documents = serviceOver(store);
    expect((await documents.get(target(), oid.toHexString())).decode()).toEqual({ _id: oid, kind: 'oid' });
    expect((await documents.get(target(), 'plain')).decode()).toEqual({ _id: 'plain', kind: 'string' });
  });

  it('answers a missing record with the 404 of its collection when that is missing, else of the record', async () => {
    const documents = serviceOver(new RecordsStandIn());
    expect(await rejection(documents.get(target(true), 'x'))).toMatchObject({ code: 'no_such_collection' });
    expect(await rejection(documents.remove(target(), 'x'))).toMatchObject({ status: 404, code: 'no_such_record' });
  });

  it('replaces a record, keeping its _id, and answers it as stored', async () => {
    const store = new RecordsStandIn();
    store.records.push({ _id: 'r1', a: 1 });
    const documents = serviceOver(store);
    expect(await documents.replace(target(), 'r1', { _id: 'r1', b: 2 })).toEqual({ _id: 'r1', b: 2 });
    expect(store.records).toEqual([{ _id: 'r1', b: 2 }]);
    expect(store.calls).toEqual(['replaceFirstById']);
    expect(await rejection(documents.replace(target(), 'r1', { _id: 'r2' }))).toMatchObject({ code: 'id_mismatch' });
  });

  it('refuses a replacement or a merge it cannot store before looking the record up', async () => {
    const store = new RecordsStandIn();
    const documents = serviceOver(store);
    expect(await rejection(documents.replace(target(), 'r1', { $where: 'x' }))).toMatchObject({ status: 400 });
    expect(await rejection(documents.merge(target(), 'r1', { $where: { a: 1 } }))).toMatchObject({ code: 'forbidden_operator' });
    expect(store.calls).toEqual([]);
  });

  it('merges fields into a record and answers it as it is afterwards', async () => {
    const store = new RecordsStandIn();
    store.records.push({ _id: 'r1', a: 1 });
    const documents = serviceOver(store);
    expect(await documents.merge(target(), 'r1', { b: 2 })).toEqual({ _id: 'r1', a: 1, b: 2 });
    // One operation: the update answers the record as it is afterwards.
    expect(store.calls).toEqual(['updateFirstById']);
  });

  it('removes a record and answers its _id', async () => {
    const store = new RecordsStandIn();
    store.records.push({ _id: 'r1' });
    expect(await serviceOver(store).remove(target(), 'r1')).toBe('r1');
    expect(store.records).toEqual([]);
    expect(store.calls).toEqual(['deleteFirstById']);
  });
});

describe('DocumentService containers', () => {
  it('is refused to callers who may not manage the area', () => {
    const documents = serviceOver(new RecordsStandIn());
    expect(() => documents.containers(ANONYMOUS)).toThrow(expect.objectContaining({ status: 401 }));
  });

  it('refuses a database the area does not own, and tells the hooks of one it created', async () => {
    const store = new RecordsStandIn();
    const created: string[] = [];
    const documents = serviceOver(store, { created: async (db) => void created.push(db), dropped: async () => undefined });
    expect(await rejection(documents.containers(admin).createDatabase('cybercom'))).toMatchObject({ code: 'reserved_name' });
    await documents.containers(admin).createDatabase('lab');
    expect([store.createdDatabases, created]).toEqual([['lab'], ['lab']]);
  });
});

describe('DocumentService collection reads', () => {
  it('counts only when the count is asked for, once', async () => {
    const store = new RecordsStandIn();
    let counts = 0;
    const stand = Object.assign(store, {
      budget: () => ({}),
      count: async () => {
        counts += 1;
        return 7;
      },
      find: () => ({}),
    });
    const documents = serviceOver(stand);
    const caller = { key: 'user:1', streamed: false };
    await documents.readCollection(admin, caller, target(), {}, async (rows) => {
      if ('values' in rows) throw new Error('expected counted rows');
      rows.open({ skip: 0, limit: 10 });
      expect(counts).toBe(0);
      expect(await rows.count).toBe(7);
      expect(await rows.count).toBe(7);
    });
    expect(counts).toBe(1);
  });
});
