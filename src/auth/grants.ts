/**
 * What a permission codename grants, as a structured value, and the one canonical text form of
 * each. Every codename is `<area>.<rest>` and `.` separates the parts of `<rest>`:
 *
 *   data_store.datastore_admin  data_store.datastore_create     roles (no second dot)
 *   catalog.catalog_admin       catalog.catalog_create
 *   cybercom_queue.task_admin   cybercom_queue.metrics_read   cybercom_queue.schedule_tasks
 *   data_store.<db>.<action>                                     every collection of a database
 *   data_store.<db>.<col>.<action>  catalog.<db>.<col>.<action>  one collection
 *   cybercom_queue.task.<task name>                              one task, its name as it is
 *
 * The form cannot be read two ways: a database name never contains `.`, so the first dot after
 * the area ends it; an action never contains `.`, so the last dot starts it; what lies between
 * (which may itself contain dots) is the collection, and a database grant has nothing there.
 * Task names are kept whole behind the fixed `task.` segment, which `task_admin` never matches.
 */
import { badRequest } from '../errors.js';
import { validateCollectionName, validateDatabaseName } from '../db/names.js';

export const PERMISSION_AREAS = ['data_store', 'catalog', 'cybercom_queue'] as const;
export type PermissionArea = (typeof PERMISSION_AREAS)[number];
export type AreaName = 'data_store' | 'catalog';
export type DocumentAction = 'safe' | 'add' | 'update' | 'delete';
export const DOCUMENT_ACTIONS: readonly DocumentAction[] = ['safe', 'add', 'update', 'delete'];

export const ROLES = {
  datastore_admin: { area: 'data_store', name: 'Data store administrator (all databases and collections)' },
  datastore_create: { area: 'data_store', name: 'Create and delete data store databases and collections' },
  catalog_admin: { area: 'catalog', name: 'Catalog administrator (all catalog collections)' },
  catalog_create: { area: 'catalog', name: 'Create and delete catalog collections' },
  task_admin: { area: 'cybercom_queue', name: 'Task administrator (run any task, see every run)' },
  // Operators' monitoring (queues, workers, the API's own health); the queue area is the
  // service-wide one, as task_admin shows.
  metrics_read: { area: 'cybercom_queue', name: 'Read service metrics (Prometheus /api/metrics)' },
  // Schedules fire without their owner present, so making one is a right of its own, beside the
  // right to run the task (which is checked again at every fire).
  schedule_tasks: { area: 'cybercom_queue', name: 'Schedule tasks (periodic and one-off runs of tasks they may run)' },
} as const satisfies Record<string, { area: PermissionArea; name: string }>;
export type Role = keyof typeof ROLES;

export type Grant =
  | { kind: 'role'; role: Role }
  /** Database grants exist only in the data store. */
  | { kind: 'database'; db: string; action: DocumentAction }
  | { kind: 'collection'; area: AreaName; db: string; col: string; action: DocumentAction }
  | { kind: 'task'; task: string }
  /**
   * Deprecated: an old-style task codename `cybercom_queue.<name with . → _>` that matched no task
   * the service knew when it was migrated. It still lets its holder run every task whose name
   * flattens to `flattened`, as it always did, until an administrator replaces it.
   */
  | { kind: 'legacy_task'; flattened: string };

/** Celery task names (the queue API's rule). */
export const TASK_NAME = /^[A-Za-z_][A-Za-z0-9_.:-]{0,199}$/;
const TASK_PREFIX = 'task.';

export function grantArea(grant: Grant): PermissionArea {
  switch (grant.kind) {
    case 'role':
      return ROLES[grant.role].area;
    case 'database':
      return 'data_store';
    case 'collection':
      return grant.area;
    case 'task':
    case 'legacy_task':
      return 'cybercom_queue';
  }
}

/** The canonical codename of a grant (the text stored on users, groups and in the catalog). */
export function encodeGrant(grant: Grant): string {
  switch (grant.kind) {
    case 'role':
      return `${ROLES[grant.role].area}.${grant.role}`;
    case 'database':
      return `data_store.${grant.db}.${grant.action}`;
    case 'collection':
      return `${grant.area}.${grant.db}.${grant.col}.${grant.action}`;
    case 'task':
      return `cybercom_queue.${TASK_PREFIX}${grant.task}`;
    case 'legacy_task':
      return `cybercom_queue.${grant.flattened}`;
  }
}

/**
 * A key that tells every grant apart, also for names that were never validated (a database
 * name with a dot taken from a URL must not meet a real grant): the parts are JSON-quoted.
 */
export function grantKey(grant: Grant): string {
  switch (grant.kind) {
    case 'role':
      return JSON.stringify(['role', grant.role]);
    case 'database':
      return JSON.stringify(['database', grant.db, grant.action]);
    case 'collection':
      return JSON.stringify(['collection', grant.area, grant.db, grant.col, grant.action]);
    case 'task':
      return JSON.stringify(['task', grant.task]);
    case 'legacy_task':
      return JSON.stringify(['legacy_task', grant.flattened]);
  }
}

const isAction = (s: string): s is DocumentAction => (DOCUMENT_ACTIONS as readonly string[]).includes(s);
const isRole = (s: string): s is Role => Object.hasOwn(ROLES, s);

/** Whether `name` passes a name rule that throws on failure. */
function passes(validate: (v: unknown) => unknown, name: string): boolean {
  try {
    validate(name);
    return true;
  } catch {
    return false;
  }
}
export const isDatabaseName = (name: string): boolean => passes(validateDatabaseName, name);
export const isCollectionName = (name: string): boolean => passes(validateCollectionName, name);
export const isTaskName = (name: string): boolean => TASK_NAME.test(name);

/**
 * The grant a canonical codename stands for, or null when `codename` is not one (a legacy
 * codename, a typo). Names inside must pass the same rules as the API's, so every grant read
 * here is one the API could ask for. Legacy task grants are not canonical: see legacy-grants.ts.
 */
export function decodeGrant(codename: string): Exclude<Grant, { kind: 'legacy_task' }> | null {
  const dot = codename.indexOf('.');
  if (dot === -1) return null;
  const area = codename.slice(0, dot);
  const rest = codename.slice(dot + 1);
  if (isRole(rest)) return ROLES[rest].area === area ? { kind: 'role', role: rest } : null;
  if (area === 'cybercom_queue') {
    if (!rest.startsWith(TASK_PREFIX)) return null;
    const task = rest.slice(TASK_PREFIX.length);
    return isTaskName(task) ? { kind: 'task', task } : null;
  }
  if (area !== 'data_store' && area !== 'catalog') return null;
  const dbEnd = rest.indexOf('.');
  if (dbEnd === -1) return null;
  const db = rest.slice(0, dbEnd);
  const tail = rest.slice(dbEnd + 1);
  const actionStart = tail.lastIndexOf('.');
  const action = tail.slice(actionStart + 1);
  if (!isAction(action) || !isDatabaseName(db)) return null;
  if (actionStart === -1) return area === 'data_store' ? { kind: 'database', db, action } : null;
  const col = tail.slice(0, actionStart);
  return isCollectionName(col) ? { kind: 'collection', area, db, col, action } : null;
}

const ACTION_NAMES: Record<DocumentAction, string> = { safe: 'read', add: 'add to', update: 'update', delete: 'delete from' };
const AREA_NAMES: Record<AreaName, string> = { data_store: 'data store', catalog: 'catalog' };

/** A readable description of a grant, offered next to its codename in the admin site. */
export function describeGrant(grant: Grant): string {
  switch (grant.kind) {
    case 'role':
      return ROLES[grant.role].name;
    case 'database':
      return `Can ${ACTION_NAMES[grant.action]} every collection of data store database ${grant.db}`;
    case 'collection':
      return `Can ${ACTION_NAMES[grant.action]} ${AREA_NAMES[grant.area]} collection ${grant.db} / ${grant.col}`;
    case 'task':
      return `Run task ${grant.task}`;
    case 'legacy_task':
      return `Run any task named like ${grant.flattened} with . read as _ (deprecated)`;
  }
}

/** The 400 for a codename that is not a grant. */
export function invalidPermission(codename: string, why?: string): Error {
  return badRequest(
    'invalid_permission',
    `"${codename}" is not a permission codename${why === undefined ? '' : `: ${why}`}. ` +
      'Expected a role (such as data_store.datastore_admin), data_store.<db>.<action>, ' +
      '<data_store|catalog>.<db>.<collection>.<action> (action: safe, add, update or delete) ' +
      'or cybercom_queue.task.<task name>.',
    { codename },
  );
}
