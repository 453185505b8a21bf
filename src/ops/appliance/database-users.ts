/**
 * The database users of an installation: the API's and the workers' (the administrator is
 * created by the server itself: MONGO_INITDB_ROOT_* in compose, FerretDB's setup user or
 * mongod's localhost exception in the local runtime). Created when missing, their passwords set
 * from secrets.env when present, so re-runs and credential rotation use the same code.
 *
 * Roles: MongoDB gets least privilege per client (the API manages databases; workers read and
 * write documents). FerretDB v2 (the local runtime's engine) accepts roles on createUser but
 * grants every user everything (each is a PostgreSQL superuser underneath) and refuses roles on
 * updateUser: there the separation is of credentials only (rotation and revocation per client).
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

/** FerretDB v2 refuses `roles` in updateUser with BadValue "Updating roles is not supported". */
function rolesRefused(err: unknown): boolean {
  return err instanceof MongoServerError && err.code === 2 && /roles is not supported/i.test(err.message);
}

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
    if (!(exists && rolesRefused(err))) throw err;
    await db.command({ updateUser: username, pwd: password });
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
