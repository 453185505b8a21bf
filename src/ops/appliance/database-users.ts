/**
 * The database users of an installation: the API's and the workers' (the administrator is
 * created by the server itself: MONGO_INITDB_ROOT_* in compose, FerretDB's setup user or
 * mongod's localhost exception in the local runtime). Created when missing, their passwords set
 * from secrets.env when present, so re-runs and credential rotation use the same code.
 *
 * Roles: MongoDB gets least privilege per client (the API manages databases; workers read and
 * write documents). FerretDB v1 accepts only `roles: []` and does no authorization at all: any
 * authenticated user may do anything, so there the separation is of credentials only.
 */
import { MongoServerError, type MongoClient } from 'mongodb';
import { ACCOUNTS, type Secrets } from './secrets.js';

const ROLES = {
  api: [
    { role: 'readWriteAnyDatabase', db: 'admin' },
    // dropDatabase and index management of data-store databases.
    { role: 'dbAdminAnyDatabase', db: 'admin' },
  ],
  worker: [{ role: 'readWriteAnyDatabase', db: 'admin' }],
} as const;

const NOT_IMPLEMENTED = 238;

export type UserAction = 'created' | 'updated';

async function userExists(admin: MongoClient, username: string): Promise<boolean> {
  const info = (await admin.db(ACCOUNTS.authSource).command({ usersInfo: username })) as { users?: unknown[] };
  return (info.users?.length ?? 0) > 0;
}

async function upsertUser(admin: MongoClient, username: string, password: string, roles: readonly object[]): Promise<UserAction> {
  const db = admin.db(ACCOUNTS.authSource);
  const exists = await userExists(admin, username);
  const command = exists ? { updateUser: username, pwd: password, roles } : { createUser: username, pwd: password, roles };
  try {
    await db.command(command);
  } catch (err) {
    if (!(err instanceof MongoServerError && err.code === NOT_IMPLEMENTED)) throw err;
    // FerretDB v1: refuses roles (NotImplemented), so separation is by credentials only.
    await db.command(exists ? { updateUser: username, pwd: password } : { createUser: username, pwd: password, roles: [] });
  }
  return exists ? 'updated' : 'created';
}

/** `admin` must be logged in as the database administrator. */
export async function ensureDatabaseUsers(admin: MongoClient, secrets: Secrets): Promise<Record<'api' | 'worker', UserAction>> {
  return {
    api: await upsertUser(admin, ACCOUNTS.database.api, secrets.DB_API_PASSWORD, ROLES.api),
    worker: await upsertUser(admin, ACCOUNTS.database.worker, secrets.DB_WORKER_PASSWORD, ROLES.worker),
  };
}
