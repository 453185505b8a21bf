/**
 * The permission rules (CONTRACT section 6), as pure functions over a Principal. Every route
 * asks these and nothing else, so the rules live in one place and are unit-tested as a table.
 */
import type { Principal } from './principal.js';
import { isAuthenticated } from './principal.js';

export type DocumentArea = 'data_store' | 'catalog';
export type DocumentAction = 'safe' | 'add' | 'update' | 'delete';

const ACTIONS: readonly DocumentAction[] = ['safe', 'add', 'update', 'delete'];
const COLLECTION_GRANT_REST = /^.+_(safe|add|update|delete)$/;

/** Who may read without credentials, per area (DATA_STORE_ANONYMOUS / CATALOG_ANONYMOUS). */
export interface ReadPolicy {
  anonymousRead: boolean;
  /** `db_col` pairs that still need the `safe` permission when anonymous reads are on. */
  safeMethodPermRequired: ReadonlySet<string>;
}

const ADMIN_CODENAME: Record<DocumentArea, string> = {
  data_store: 'data_store.datastore_admin',
  catalog: 'catalog.catalog_admin',
};
const CREATE_CODENAME: Record<DocumentArea, string> = {
  data_store: 'data_store.datastore_create',
  catalog: 'catalog.catalog_create',
};

export const TASK_ADMIN = 'cybercom_queue.task_admin';

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

export function hasPermission(p: Principal, codename: string): boolean {
  return p.isSuperuser || p.permissions.has(codename);
}

export function isAreaAdmin(p: Principal, area: DocumentArea): boolean {
  return hasPermission(p, ADMIN_CODENAME[area]);
}

/** Create or delete databases (data store) and collections (both areas). */
export function canManageContainers(p: Principal, area: DocumentArea): boolean {
  return isAreaAdmin(p, area) || hasPermission(p, CREATE_CODENAME[area]);
}

export function collectionCodename(area: DocumentArea, db: string, col: string, action: DocumentAction): string {
  return `${area}.${db}_${col}_${action}`;
}

export function databaseCodename(db: string, action: DocumentAction): string {
  return `data_store.${db}_${action}`;
}

function anonymousReadAllowed(area: DocumentArea, db: string, col: string | null, policy: ReadPolicy): boolean {
  if (!policy.anonymousRead) return false;
  return col === null || !policy.safeMethodPermRequired.has(`${db}_${col}`);
}

/** May `p` perform `action` on records of `db.col`? A data-store database grant covers its collections. */
export function canAccessCollection(
  p: Principal,
  area: DocumentArea,
  db: string,
  col: string,
  action: DocumentAction,
  policy: ReadPolicy,
): boolean {
  if (p.isSuperuser || isAreaAdmin(p, area)) return true;
  if (action === 'safe' && anonymousReadAllowed(area, db, col, policy)) return true;
  if (!isAuthenticated(p)) return false;
  if (hasPermission(p, collectionCodename(area, db, col, action))) return true;
  return area === 'data_store' && hasPermission(p, databaseCodename(db, action));
}

/**
 * May `p` see that `db` exists and list its collections? Yes when it may read something in it:
 * a database grant, any collection grant inside it, anonymous reads, or an admin role.
 */
export function canSeeDatabase(p: Principal, area: DocumentArea, db: string, policy: ReadPolicy): boolean {
  if (p.isSuperuser || isAreaAdmin(p, area) || canManageContainers(p, area)) return true;
  if (anonymousReadAllowed(area, db, null, policy)) return true;
  if (!isAuthenticated(p)) return false;
  if (area === 'data_store' && [...ACTIONS].some((a) => hasPermission(p, databaseCodename(db, a)))) return true;
  // Any collection grant inside the database: `<area>.<db>_<col>_<action>` with a non-empty col.
  const prefix = `${area}.${db}_`;
  for (const code of p.permissions) {
    if (code.startsWith(prefix) && COLLECTION_GRANT_REST.test(code.slice(prefix.length))) return true;
  }
  return false;
}


/** Collections are listed when the caller holds any grant on them (or on their database). */
export function canSeeCollection(p: Principal, area: DocumentArea, db: string, col: string, policy: ReadPolicy): boolean {
  return ACTIONS.some((a) => canAccessCollection(p, area, db, col, a, policy));
}

/** Queue: run a task (`cybercom_queue.<name with . → _>`), or be a task admin. */
export function taskCodename(taskName: string): string {
  return `cybercom_queue.${taskName.replace(/\./g, '_')}`;
}

export function canRunTask(p: Principal, taskName: string): boolean {
  return isAuthenticated(p) && (hasPermission(p, TASK_ADMIN) || hasPermission(p, taskCodename(taskName)));
}

export function isTaskAdmin(p: Principal): boolean {
  return hasPermission(p, TASK_ADMIN);
}
