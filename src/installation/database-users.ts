/**
 * The database users of an installation: the API's and the workers' (the administrator is
 * created by the server itself: MONGO_INITDB_ROOT_* in compose, FerretDB's setup user or
 * mongod's localhost exception in the local runtime). Created when missing, their passwords set
 * from secrets.env when present, so re-runs and credential rotation use the same code.
 *
 * Roles on MongoDB, least privilege per client (src/db/worker-role.ts): the API manages
 * databases and keeps the workers' role in step with the data store; workers read and write
 * data-store databases and the result collection, and nothing else of the service database (no
 * users, groups, tokens or sessions). The workers' role is created once and then only added to,
 * never replaced, because the API adds a privilege to it for every data-store database; an
 * upgrade from the former readWriteAnyDatabase seeds it with the databases that exist (the API
 * trims it to the data store's when it next starts).
 *
 * FerretDB v2 has no role commands and no authorization at all: it runs every client's command,
 * user management included, on its own PostgreSQL connection. The local runtime therefore turns
 * its user management through the wire off and sets its logins in SQL as it starts
 * (local-services/postgres.ts), and never calls this; on a FerretDB that still allows it (the
 * container test's stand-in for mongod), the users get the built-in roles below, which it accepts
 * on createUser and refuses on updateUser.
 */
import { MongoServerError, type MongoClient } from 'mongodb';
import { DEFAULT_RESULT_COLLECTION } from '../queue/results/result-store.js';
import { isReservedDatabase } from '../db/names.js';
import {
  API_GRANTS_ROLE,
  apiGrantsPrivileges,
  apiGrantsRoleDocument,
  dataStorePrivilege,
  resultPrivilege,
  ROLE_DATABASE,
  WORKER_ROLE,
  workerRoleDocument,
} from '../db/worker-role.js';
import { SERVICE_DATABASE } from './env-files.js';
import { ACCOUNTS, type Secrets } from './secrets.js';

/** Users' roles on an engine with role commands (MongoDB). */
export const ROLES = {
  api: [
    { role: 'readWriteAnyDatabase', db: 'admin' },
    // dropDatabase and index management of data-store databases.
    { role: 'dbAdminAnyDatabase', db: 'admin' },
    // Adding and removing data-store databases in the workers' role.
    { role: API_GRANTS_ROLE, db: ROLE_DATABASE },
  ],
  worker: [{ role: WORKER_ROLE, db: ROLE_DATABASE }],
} as const;

/** Users' roles on an engine without role commands (FerretDB), which grants everything anyway. */
export const ROLES_WITHOUT_ROLE_COMMANDS = {
  api: [
    { role: 'readWriteAnyDatabase', db: 'admin' },
    { role: 'dbAdminAnyDatabase', db: 'admin' },
  ],
  worker: [{ role: 'readWriteAnyDatabase', db: 'admin' }],
} as const;

const COMMAND_NOT_FOUND = 59;

/** FerretDB answers role commands with CommandNotFound. */
function noRoleCommands(err: unknown): boolean {
  return err instanceof MongoServerError && err.code === COMMAND_NOT_FOUND;
}

async function roleExists(admin: MongoClient, role: string): Promise<boolean> {
  const info = (await admin.db(ROLE_DATABASE).command({ rolesInfo: { role, db: ROLE_DATABASE } })) as { roles?: unknown[] };
  return (info.roles?.length ?? 0) > 0;
}

/**
 * Creates or updates the two custom roles; false when the engine has no role commands. A new
 * workers' role is seeded with every existing application database (see the header).
 */
async function ensureRoles(admin: MongoClient): Promise<boolean> {
  const db = admin.db(ROLE_DATABASE);
  let apiRoleExists: boolean;
  try {
    apiRoleExists = await roleExists(admin, API_GRANTS_ROLE);
  } catch (err) {
    if (noRoleCommands(err)) return false;
    throw err;
  }
  if (apiRoleExists) await db.command({ updateRole: API_GRANTS_ROLE, privileges: apiGrantsPrivileges(), roles: [] });
  else await db.command(apiGrantsRoleDocument());

  if (await roleExists(admin, WORKER_ROLE)) {
    // Additive: keeps the data-store databases the API has granted.
    await db.command({ grantPrivilegesToRole: WORKER_ROLE, privileges: [resultPrivilege(SERVICE_DATABASE, DEFAULT_RESULT_COLLECTION)] });
  } else {
    await db.command(workerRoleDocument(SERVICE_DATABASE, DEFAULT_RESULT_COLLECTION));
    const listed = await admin.db('admin').admin().listDatabases({ nameOnly: true });
    const existing = listed.databases.map((d) => d.name).filter((name) => !isReservedDatabase(name, [SERVICE_DATABASE]));
    if (existing.length > 0) await db.command({ grantPrivilegesToRole: WORKER_ROLE, privileges: existing.map(dataStorePrivilege) });
  }
  return true;
}

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
  const roles = (await ensureRoles(admin)) ? ROLES : ROLES_WITHOUT_ROLE_COMMANDS;
  return {
    api: await upsertUser(admin, ACCOUNTS.database.api, secrets.DB_API_PASSWORD, roles.api),
    worker: await upsertUser(admin, ACCOUNTS.database.worker, secrets.DB_WORKER_PASSWORD, roles.worker),
  };
}
