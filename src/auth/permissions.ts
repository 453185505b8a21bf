/**
 * The permission rules, as pure functions over a Principal. Every route asks these and nothing
 * else, so the rules live in one place and are unit-tested as a table. Grants are compared as
 * structured values (see grants.ts and grant-set.ts), never as joined strings.
 */
import type { Principal } from './principal.js';
import { isAuthenticated } from './principal.js';
import { DOCUMENT_ACTIONS, encodeGrant, type DocumentAction, type AreaName, type Role } from './grants.js';

export type { DocumentAction, AreaName } from './grants.js';

/** Who may read without credentials, per area (DATA_STORE_ANONYMOUS / CATALOG_ANONYMOUS). */
export interface ReadPolicy {
  anonymousRead: boolean;
  /**
   * Collections that still need the `safe` permission when anonymous reads are on, as `db.col`
   * (one reading: database names have no dot) or the older `db_col`. An older entry covers
   * every pair it could spell, which errs on the side of asking for a login.
   */
  safeMethodPermRequired: ReadonlySet<string>;
}

const ADMIN_ROLE: Record<AreaName, Role> = { data_store: 'datastore_admin', catalog: 'catalog_admin' };
const CREATE_ROLE: Record<AreaName, Role> = { data_store: 'datastore_create', catalog: 'catalog_create' };

export function actionForMethod(method: string): DocumentAction {
  switch (method.toUpperCase()) {
    case 'GET':
    case 'HEAD':
    case 'OPTIONS':
      return 'safe';
    case 'POST':
      return 'add';
    case 'PUT':
    case 'PATCH':
      return 'update';
    case 'DELETE':
      return 'delete';
    default:
      return 'update';
  }
}

export function hasRole(p: Principal, role: Role): boolean {
  return p.isSuperuser || p.grants.hasRole(role);
}

export function isAreaAdmin(p: Principal, area: AreaName): boolean {
  return hasRole(p, ADMIN_ROLE[area]);
}

/** Create or delete databases (data store) and collections (both areas). */
export function canManageContainers(p: Principal, area: AreaName): boolean {
  return isAreaAdmin(p, area) || hasRole(p, CREATE_ROLE[area]);
}

/** The canonical codename granting `action` on records of one collection. */
export function collectionCodename(area: AreaName, db: string, col: string, action: DocumentAction): string {
  return encodeGrant({ kind: 'collection', area, db, col, action });
}

/** The canonical codename granting `action` on every collection of a data-store database. */
export function databaseCodename(db: string, action: DocumentAction): string {
  return encodeGrant({ kind: 'database', db, action });
}

function anonymousReadAllowed(db: string, col: string | null, policy: ReadPolicy): boolean {
  if (!policy.anonymousRead) return false;
  if (col === null) return true;
  const protectedPairs = policy.safeMethodPermRequired;
  return !protectedPairs.has(`${db}.${col}`) && !protectedPairs.has(`${db}_${col}`);
}

/** May `p` perform `action` on records of `db.col`? A data-store database grant covers its collections. */
export function canAccessCollection(
  p: Principal,
  area: AreaName,
  db: string,
  col: string,
  action: DocumentAction,
  policy: ReadPolicy,
): boolean {
  if (p.isSuperuser || isAreaAdmin(p, area)) return true;
  if (action === 'safe' && anonymousReadAllowed(db, col, policy)) return true;
  if (!isAuthenticated(p)) return false;
  if (p.grants.has({ kind: 'collection', area, db, col, action })) return true;
  return area === 'data_store' && p.grants.has({ kind: 'database', db, action });
}

/**
 * May `p` see that `db` exists and list its collections? Yes when it may read something in it:
 * a database grant, any collection grant inside it, anonymous reads, or an admin role.
 */
export function canSeeDatabase(p: Principal, area: AreaName, db: string, policy: ReadPolicy): boolean {
  if (p.isSuperuser || isAreaAdmin(p, area) || canManageContainers(p, area)) return true;
  if (anonymousReadAllowed(db, null, policy)) return true;
  if (!isAuthenticated(p)) return false;
  if (area === 'data_store' && DOCUMENT_ACTIONS.some((action) => p.grants.has({ kind: 'database', db, action }))) return true;
  return p.grants.hasCollectionGrantIn(area, db);
}

/** Collections are listed when the caller holds any grant on them (or on their database). */
export function canSeeCollection(p: Principal, area: AreaName, db: string, col: string, policy: ReadPolicy): boolean {
  return DOCUMENT_ACTIONS.some((a) => canAccessCollection(p, area, db, col, a, policy));
}

/** The canonical codename for running one task: `cybercom_queue.task.<name>`, the name kept whole. */
export function taskCodename(taskName: string): string {
  return encodeGrant({ kind: 'task', task: taskName });
}

export function canRunTask(p: Principal, taskName: string): boolean {
  return isAuthenticated(p) && (isTaskAdmin(p) || p.grants.allowsTask(taskName));
}

export function isTaskAdmin(p: Principal): boolean {
  return hasRole(p, 'task_admin');
}

/** May `p` have schedules at all (each one's task still needs canRunTask)? Task admins may. */
export function canSchedule(p: Principal): boolean {
  return isAuthenticated(p) && (isTaskAdmin(p) || hasRole(p, 'schedule_tasks'));
}
