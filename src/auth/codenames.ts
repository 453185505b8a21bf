/**
 * Permission codenames as stored on users and groups: `<area>.<name>` (CONTRACT section 6).
 * The catalog of known codenames (the Permission collection) is what the admin site offers.
 */
import { badRequest } from '../errors.js';

export const PERMISSION_AREAS = ['data_store', 'catalog', 'cybercom_queue'] as const;
export type PermissionArea = (typeof PERMISSION_AREAS)[number];

/** The fixed role codenames, seeded into the catalog at start-up. */
export const BUILTIN_PERMISSIONS: readonly { codename: string; name: string }[] = [
  { codename: 'data_store.datastore_admin', name: 'Data store administrator (all databases and collections)' },
  { codename: 'data_store.datastore_create', name: 'Create and delete data store databases and collections' },
  { codename: 'catalog.catalog_admin', name: 'Catalog administrator (all catalog collections)' },
  { codename: 'catalog.catalog_create', name: 'Create and delete catalog collections' },
  { codename: 'cybercom_queue.task_admin', name: 'Task administrator (run any task, see every run)' },
];

const CODENAME = /^(data_store|catalog|cybercom_queue)\.([^\s.$][^\s$]{0,254})$/;

const ACTION_NAMES: Record<string, string> = { safe: 'read', add: 'add to', update: 'update', delete: 'delete from' };

export interface ParsedCodename {
  codename: string;
  area: PermissionArea;
  name: string;
}

/** Validates a codename (400 `invalid_permission` otherwise) and derives a readable name. */
export function parseCodename(codename: string): ParsedCodename {
  const match = CODENAME.exec(codename);
  if (match === null) {
    throw badRequest(
      'invalid_permission',
      `"${codename}" is not a permission codename: expected <area>.<name> with area one of ${PERMISSION_AREAS.join(', ')}.`,
    );
  }
  const area = match[1] as PermissionArea;
  const local = match[2] as string;
  const builtin = BUILTIN_PERMISSIONS.find((p) => p.codename === codename);
  return { codename, area, name: builtin?.name ?? describe(area, local) };
}

function describe(area: PermissionArea, local: string): string {
  if (area === 'cybercom_queue') return `Run task ${local}`;
  const underscore = local.lastIndexOf('_');
  const action = underscore === -1 ? undefined : ACTION_NAMES[local.slice(underscore + 1)];
  const target = underscore === -1 ? local : local.slice(0, underscore);
  const areaName = area === 'data_store' ? 'data store' : 'catalog';
  return action === undefined ? `${areaName}: ${local}` : `Can ${action} ${areaName} ${target}`;
}
