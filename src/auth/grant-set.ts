/**
 * A principal's grants, parsed once from the stored codenames and kept as unambiguous keys, so
 * each permission check is a set lookup on structured values and never a string comparison
 * that two different names could both satisfy.
 */
import { decodeGrant, grantKey, type AreaName, type Grant, type Role } from './grants.js';
import { flattenTaskName, parseLegacyCodename } from './legacy-grants.js';

export class GrantSet {
  static readonly EMPTY = new GrantSet([]);

  private readonly keys = new Set<string>();
  /** `[area, db]` keys of databases holding at least one collection grant. */
  private readonly databasesWithCollectionGrants = new Set<string>();
  readonly grants: readonly Grant[];

  constructor(grants: Iterable<Grant>) {
    const list: Grant[] = [];
    for (const grant of grants) {
      const key = grantKey(grant);
      if (this.keys.has(key)) continue;
      this.keys.add(key);
      list.push(grant);
      if (grant.kind === 'collection') this.databasesWithCollectionGrants.add(JSON.stringify([grant.area, grant.db]));
    }
    this.grants = Object.freeze(list);
  }

  /**
   * The grants of stored codenames. Canonical codenames count, and so do legacy task codenames
   * the start-up migration could not match to a task (deprecated, matched the old way). Other
   * legacy codenames are rewritten by that migration before any request is served; one that
   * appears later (written around the service) grants nothing, rather than something it might
   * not have meant.
   */
  static fromCodenames(codenames: Iterable<string>): GrantSet {
    const grants: Grant[] = [];
    for (const codename of codenames) {
      const grant = decodeGrant(codename);
      if (grant !== null) grants.push(grant);
      else {
        const legacy = parseLegacyCodename(codename);
        if (legacy?.kind === 'task') grants.push({ kind: 'legacy_task', flattened: legacy.flattened });
      }
    }
    return new GrantSet(grants);
  }

  has(grant: Grant): boolean {
    return this.keys.has(grantKey(grant));
  }

  hasRole(role: Role): boolean {
    return this.has({ kind: 'role', role });
  }

  /** Any collection grant inside `db` of `area` (database grants are asked for separately). */
  hasCollectionGrantIn(area: AreaName, db: string): boolean {
    return this.databasesWithCollectionGrants.has(JSON.stringify([area, db]));
  }

  /** The grant for task `name`, or a deprecated legacy one its flattened name matches. */
  allowsTask(name: string): boolean {
    return this.has({ kind: 'task', task: name }) || this.has({ kind: 'legacy_task', flattened: flattenTaskName(name) });
  }
}
