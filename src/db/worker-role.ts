/**
 * Least privilege for the workers' database login on MongoDB. Privileges only add up, and the
 * "any database" resource (`{db: "", collection: ""}`, what readWriteAnyDatabase uses) covers the
 * service's database too, with its users, groups, tokens and sessions. So the worker gets a
 * custom role that names what it may use, one resource at a time:
 *
 * - the service database's result collection (Celery's `tombstone`), which it writes;
 * - each data-store database, added by the API when it creates one, reconciled when the API
 *   starts, and removed when the API deletes it.
 *
 * The API's own login gets a second custom role with just the actions to maintain those
 * privileges (granting privileges on a database needs `grantRole` on that database, so on any of
 * them). That makes the API's login able to grant privileges, which is why it is the API's and
 * never the workers': the API already holds the users and their data.
 *
 * Pure documents here; worker-privileges.ts and the installer apply them.
 */
import type { Document } from 'mongodb';
import { WORKER_ROLE } from '../config/database-roles.js';

/** The custom role on `admin` that workers hold. */
export { WORKER_ROLE };
/** The custom role on `admin` that lets the API maintain WORKER_ROLE. */
export const API_GRANTS_ROLE = 'cybercom-api-grants';
export const ROLE_DATABASE = 'admin';

/** Reading and writing documents, collections and indexes: the readWrite built-in role's actions. */
export const DATA_STORE_ACTIONS = [
  'changeStream',
  'collStats',
  'convertToCapped',
  'createCollection',
  'createIndex',
  'dbHash',
  'dbStats',
  'dropCollection',
  'dropIndex',
  'find',
  'insert',
  'killCursors',
  'listCollections',
  'listIndexes',
  'remove',
  'renameCollectionSameDB',
  'update',
] as const;

/** Storing results as Celery does (upsert by task id, an index on date_done) and reading them back. */
export const RESULT_ACTIONS = ['createIndex', 'find', 'insert', 'listIndexes', 'remove', 'update'] as const;

export interface Privilege {
  resource: { db: string; collection: string };
  actions: string[];
}

/** Every non-system collection of one data-store database. */
export function dataStorePrivilege(database: string): Privilege {
  return { resource: { db: database, collection: '' }, actions: [...DATA_STORE_ACTIONS] };
}

export function resultPrivilege(serviceDatabase: string, resultCollection: string): Privilege {
  return { resource: { db: serviceDatabase, collection: resultCollection }, actions: [...RESULT_ACTIONS] };
}

/** The worker role as first created: results only; data-store databases are added by the API. */
export function workerRoleDocument(serviceDatabase: string, resultCollection: string): Document {
  return { createRole: WORKER_ROLE, privileges: [resultPrivilege(serviceDatabase, resultCollection)], roles: [] };
}

/** Privileges of API_GRANTS_ROLE: change and read WORKER_ROLE's privileges. */
export function apiGrantsPrivileges(): Privilege[] {
  return [
    // grantPrivilegesToRole/revokePrivilegesFromRole need these on the database a privilege targets.
    { resource: { db: '', collection: '' }, actions: ['grantRole', 'revokeRole'] },
    // rolesInfo on the role's own database, to reconcile.
    { resource: { db: ROLE_DATABASE, collection: '' }, actions: ['viewRole'] },
  ];
}

export function apiGrantsRoleDocument(): Document {
  return { createRole: API_GRANTS_ROLE, privileges: apiGrantsPrivileges(), roles: [] };
}

/** The data-store databases a role document's privileges name (whole-database resources only). */
export function grantedDatabases(privileges: readonly Privilege[], serviceDatabase: string): string[] {
  return privileges
    .filter(
      (p) => p.resource.collection === '' && p.resource.db !== '' && p.resource.db !== serviceDatabase && p.resource.db !== ROLE_DATABASE,
    )
    .map((p) => p.resource.db);
}
