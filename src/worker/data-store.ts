/**
 * What tasks get to read and write application data: collections of the MongoDB server the
 * worker is connected to.
 *
 * - Off limits to every task: the server's own databases and the service's database, where the
 *   results live beside the users, tokens and sessions (the installer keeps both in one
 *   database). A task that could write there could, for one, add a superuser. Names are compared
 *   without regard to case, as MongoDB itself refuses two databases differing only in case.
 * - `collectionFor` gives a task the collection only when the user who submitted it (the
 *   `authenticated_user` the API attaches) holds the data-store permission for the action, by
 *   the same rules as the REST API; a task nobody authenticated for gets nothing. The user's
 *   permissions come with the task message (see submitter-access.ts): the worker never reads the
 *   service's users or groups, so its database login needs no access to them.
 * - `insertRecord` writes a record by the same rules as the REST API, its Extended JSON read the
 *   same way: what the API refuses, a task cannot store either, and what the API stores as a
 *   date or an ObjectId, a task stores as one too.
 */
import type { Collection, Document, MongoClient } from 'mongodb';
import { canAccessCollection, type DocumentAction } from '../auth/permissions.js';
import type { Principal } from '../auth/principal.js';
import { GrantSet } from '../auth/grant-set.js';
import { isReservedDatabase } from '../db/names.js';
import { storableRecordFromJson } from '../documents/record-rules.js';
import { isApiError } from '../errors.js';
import type { SubmitterAccess } from '../queue/protocol/submitter-access.js';

/** Python's name for it, so Celery clients see a familiar exception type. */
export class PermissionError extends Error {
  override readonly name = 'PermissionError';
}

/** A record the service would not store: Python's ValueError, with the same words the REST API uses. */
export class ValueError extends Error {
  override readonly name = 'ValueError';
}

/** Tasks never read anonymously: anonymous-read settings of the API do not apply. */
const NO_ANONYMOUS_READS = { anonymousRead: false, safeMethodPermRequired: new Set<string>() };

/** The submitter as the permission check sees them, from what their task's message carries. */
function principalOf(access: SubmitterAccess): Principal {
  const permissions = new Set(access.dataStorePermissions);
  return {
    authMethod: 'task',
    userId: access.username,
    username: access.username,
    isSuperuser: access.isSuperuser,
    isStaff: false,
    permissions,
    grants: GrantSet.fromCodenames(permissions),
  };
}

export class DataStore {
  constructor(
    private readonly client: MongoClient,
    /** The service's database: tasks never touch it (the worker itself writes results there). */
    private readonly serviceDatabase: string,
    /** What the running task's message says about its submitter; null when it says nothing. */
    private readonly submitter: SubmitterAccess | null = null,
  ) {}

  /** This data store for one task, whose permission checks use its message's `submitter`. */
  forTask(submitter: SubmitterAccess | null): DataStore {
    return new DataStore(this.client, this.serviceDatabase, submitter);
  }

  /** Any collection outside the protected databases, without a permission check. */
  collection<T extends Document = Document>(database: string, collection: string): Collection<T> {
    if (typeof database !== 'string' || database.trim() === '') throw new TypeError('database name is required');
    if (typeof collection !== 'string' || collection.trim() === '') throw new TypeError('collection name is required');
    if (isReservedDatabase(database, [this.serviceDatabase]))
      throw new PermissionError(`database "${database}" is reserved for the server and the service`);
    return this.client.db(database).collection<T>(collection);
  }

  /** The collection, when `username` may perform `action` on its records (data-store permissions). */
  async collectionFor<T extends Document = Document>(
    username: string | null,
    action: DocumentAction,
    database: string,
    collection: string,
  ): Promise<Collection<T>> {
    const target = this.collection<T>(database, collection);
    if (username === null) throw new PermissionError('this task needs the user who submitted it, and none was given');
    if (this.submitter === null || this.submitter.username !== username) {
      throw new PermissionError(`the task message carries no data-store permissions of user "${username}"`);
    }
    const principal = principalOf(this.submitter);
    if (!canAccessCollection(principal, 'data_store', database, collection, action, NO_ANONYMOUS_READS)) {
      throw new PermissionError(`user "${username}" may not ${action === 'safe' ? 'read' : action} records of ${database}.${collection}`);
    }
    return target;
  }

  /**
   * Inserts `record` (as JSON, Extended JSON included) into the collection when `username` may
   * add records to it and the record passes the same rules as a record sent to the REST API
   * (record-rules.ts); returns its id. A refused record is a ValueError and nothing is written.
   */
  async insertRecord(username: string | null, database: string, collection: string, record: unknown): Promise<unknown> {
    let document: Document;
    try {
      document = storableRecordFromJson(record);
    } catch (error) {
      if (isApiError(error)) throw new ValueError(error.message);
      throw error;
    }
    const target = await this.collectionFor(username, 'add', database, collection);
    // A copy: the driver adds the `_id` it generates to the document it is given.
    const { insertedId } = await target.insertOne({ ...document });
    return insertedId;
  }
}
