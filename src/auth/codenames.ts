/**
 * Permission codenames as stored on users and groups and listed in the catalog of known
 * codenames (the Permission collection), which the admin site offers. Their format and meaning
 * are in grants.ts; this module checks codenames given as input and names them readably.
 */
import {
  ROLES,
  decodeGrant,
  describeGrant,
  encodeGrant,
  grantArea,
  invalidPermission,
  type Grant,
  type PermissionArea,
  type Role,
} from './grants.js';

export { PERMISSION_AREAS, type PermissionArea } from './grants.js';

export interface ParsedCodename {
  codename: string;
  area: PermissionArea;
  name: string;
}

/** A grant as the catalog lists it: its canonical codename, area and readable name. */
export function describeCodename(grant: Grant): ParsedCodename {
  return { codename: encodeGrant(grant), area: grantArea(grant), name: describeGrant(grant) };
}

/** The fixed role codenames, seeded into the catalog at start-up. */
export const BUILTIN_PERMISSIONS: readonly ParsedCodename[] = (Object.keys(ROLES) as Role[]).map((role) =>
  describeCodename({ kind: 'role', role }),
);

/**
 * Validates a canonical codename (400 `invalid_permission` otherwise) and derives a readable
 * name. Legacy codenames are converted by PermissionCatalog.normalize, not here.
 */
export function parseCodename(codename: string): ParsedCodename {
  const grant = decodeGrant(codename);
  if (grant === null) throw invalidPermission(codename);
  return describeCodename(grant);
}
