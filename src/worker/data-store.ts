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
 *   the same rules as the REST API; a task nobody authenticated for gets nothing.
 */
import type { Collection, Db, Document, MongoClient, ObjectId } from 'mongodb';
import { canAccessCollection, type DocumentAction } from '../auth/permissions.js';
import type { Principal } from '../auth/principal.js';
import { isReservedDatabase } from '../documents/names.js';

/** Python's name for it, so Celery clients see a familiar exception type. */
export class PermissionError extends Error {
  override readonly name = 'PermissionError';
}

/** Tasks never read anonymously: anonymous-read settings of the API do not apply. */
const NO_ANONYMOUS_READS = { anonymousRead: false, safeMethodPermRequired: new Set<string>() };

interface StoredUser {
  _id: ObjectId;
  username: string;
  is_active?: boolean;
  is_superuser?: boolean;
  is_staff?: boolean;
  permissions?: string[];
  groups?: ObjectId[];
}

/** The user's effective permissions, as the API computes them: their own plus their groups'. */
async function principalOf(serviceDb: Db, username: string): Promise<Principal | null> {
  const user = await serviceDb.collection<StoredUser>('auth_user').findOne({ username });
  if (user === null || user.is_active === false) return null;
  const permissions = new Set(user.permissions ?? []);
  if ((user.groups ?? []).length > 0) {
    const groups = serviceDb.collection<{ permissions?: string[] }>('auth_group').find({ _id: { $in: user.groups } }, { projection: { permissions: 1 } });
    for await (const group of groups) for (const code of group.permissions ?? []) permissions.add(code);
  }
  return {
    authMethod: 'task',
    userId: String(user._id),
    username: user.username,
    isSuperuser: user.is_superuser === true,
    isStaff: user.is_staff === true,
    permissions,
  };
}

export class DataStore {
  constructor(
    private readonly client: MongoClient,
    /** The service's database: users and groups are read there, and nothing is written there. */
    private readonly serviceDatabase: string,
  ) {}

  /** Any collection outside the protected databases, without a permission check. */
  collection<T extends Document = Document>(database: string, collection: string): Collection<T> {
    if (typeof database !== 'string' || database.trim() === '') throw new TypeError('database name is required');
    if (typeof collection !== 'string' || collection.trim() === '') throw new TypeError('collection name is required');
    if (isReservedDatabase(database, [this.serviceDatabase])) throw new PermissionError(`database "${database}" is reserved for the server and the service`);
    return this.client.db(database).collection<T>(collection);
  }

  /** The collection, when `username` may perform `action` on its records (data-store permissions). */
  async collectionFor<T extends Document = Document>(username: string | null, action: DocumentAction, database: string, collection: string): Promise<Collection<T>> {
    const target = this.collection<T>(database, collection);
    if (username === null) throw new PermissionError('this task needs the user who submitted it, and none was given');
    const principal = await principalOf(this.client.db(this.serviceDatabase), username);
    if (principal === null) throw new PermissionError(`no active user "${username}"`);
    if (!canAccessCollection(principal, 'data_store', database, collection, action, NO_ANONYMOUS_READS)) {
      throw new PermissionError(`user "${username}" may not ${action === 'safe' ? 'read' : action} records of ${database}.${collection}`);
    }
    return target;
  }
}
