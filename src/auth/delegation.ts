/**
 * Who may hand out which rights, as pure functions: the rules the admin site's user, group,
 * permission and token actions obey (enforced by DelegationGuard before anything is written).
 *
 * - Superusers grant anything and manage every account's token.
 * - Staff who are not superusers grant only what they hold themselves (directly, through a group,
 *   or through a wider grant: a database grant covers its collections, an area's admin role all
 *   of the area), and never an area-wide role: those reach every database, collection or task and
 *   are the superusers' to give. The rule is the same whoever receives the grant, the grantor
 *   included, so nobody can raise their own rights.
 * - Staff issue, rotate, revoke and see only their own API token: a token for someone else would
 *   let them act as that person.
 * - Staff set the password only of accounts holding nothing they could not grant themselves (and
 *   never a superuser's): logging in as an account that holds more would raise their rights.
 */
import { GrantSet } from './grant-set.js';
import type { Grant, Role } from './grants.js';

/** Area-wide roles: every database and collection of an area (or their creation and deletion), or every task. */
export const SUPERUSER_ONLY_ROLES: ReadonlySet<Role> = new Set<Role>([
  'datastore_admin',
  'datastore_create',
  'catalog_admin',
  'catalog_create',
  'task_admin',
]);

/** The part of an account the rules look at. */
export interface Grantor {
  readonly id: string;
  readonly isSuperuser: boolean;
  /** Effective codenames as stored (own and every group's). */
  readonly permissions: ReadonlySet<string>;
  /** The same, parsed. */
  readonly grants: GrantSet;
}

/** Does `holder` have what `grant` gives, by that grant or a wider one it holds? */
export function holdsGrant(holder: Pick<Grantor, 'isSuperuser' | 'grants'>, grant: Grant): boolean {
  if (holder.isSuperuser) return true;
  const held = holder.grants;
  switch (grant.kind) {
    case 'role':
      if (grant.role === 'datastore_create') return held.hasRole('datastore_create') || held.hasRole('datastore_admin');
      if (grant.role === 'catalog_create') return held.hasRole('catalog_create') || held.hasRole('catalog_admin');
      return held.hasRole(grant.role);
    case 'database':
      return held.hasRole('datastore_admin') || held.has(grant);
    case 'collection':
      if (held.hasRole(grant.area === 'data_store' ? 'datastore_admin' : 'catalog_admin') || held.has(grant)) return true;
      return grant.area === 'data_store' && held.has({ kind: 'database', db: grant.db, action: grant.action });
    case 'task':
      return held.hasRole('task_admin') || held.allowsTask(grant.task);
    case 'legacy_task':
      return held.hasRole('task_admin') || held.has(grant);
  }
}

/** May `grantor` give `grant` to anyone (themselves included)? */
export function mayDelegate(grantor: Pick<Grantor, 'isSuperuser' | 'grants'>, grant: Grant): boolean {
  if (grantor.isSuperuser) return true;
  if (grant.kind === 'role' && SUPERUSER_ONLY_ROLES.has(grant.role)) return false;
  return holdsGrant(grantor, grant);
}

/**
 * The codenames among `codenames` that `grantor` may not give, in their order. A codename that
 * grants nothing the service can read is given only by a superuser or by whoever holds the very
 * same codename.
 */
export function undelegable(grantor: Grantor, codenames: Iterable<string>): string[] {
  if (grantor.isSuperuser) return [];
  const refused: string[] = [];
  for (const codename of new Set(codenames)) {
    const [grant] = GrantSet.fromCodenames([codename]).grants;
    const allowed = grant === undefined ? grantor.permissions.has(codename) : mayDelegate(grantor, grant);
    if (!allowed) refused.push(codename);
  }
  return refused;
}

/** May `actor` issue, rotate, revoke or see the API token of the account `ownerId`? */
export function mayManageTokenOf(actor: Pick<Grantor, 'id' | 'isSuperuser'>, ownerId: string): boolean {
  return actor.isSuperuser || actor.id === ownerId;
}

/**
 * May `actor` set the password of `target` (and so log in as it)? Their own, yes; another's only
 * when the target is no superuser and holds nothing the actor could not grant.
 */
export function mayTakeOver(actor: Grantor, target: Pick<Grantor, 'id' | 'isSuperuser' | 'permissions'>): boolean {
  if (actor.isSuperuser || actor.id === target.id) return true;
  return !target.isSuperuser && undelegable(actor, target.permissions).length === 0;
}
