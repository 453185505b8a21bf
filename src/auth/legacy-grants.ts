/**
 * Old-style (legacy) codenames, which joined names with `_` and so could mean several grants:
 * `data_store.<db>_<action>`, `<area>.<db>_<col>_<action>` and `cybercom_queue.<task with . → _>`.
 * `data_store.a_b_c_safe` was at once database `a_b_c`, `a_b`/`c` and `a`/`b_c`. This module
 * lists what a legacy codename could mean and picks the meanings that exist now; grants-migration
 * and the permission catalog decide what to do with them.
 */
import { DOCUMENT_ACTIONS, ROLES, isCollectionName, isDatabaseName, type DocumentAction, type AreaName, type Grant } from './grants.js';

export type LegacyCodename =
  { kind: 'document'; area: AreaName; joined: string; action: DocumentAction } | { kind: 'task'; flattened: string };

const DOCUMENT = new RegExp(`^(data_store|catalog)\\.(.+)_(${DOCUMENT_ACTIONS.join('|')})$`);
/** A task name with its dots turned into underscores, as the old codenames stored it. */
const FLATTENED_TASK = /^cybercom_queue\.([A-Za-z_][A-Za-z0-9_:-]{0,199})$/;

/**
 * The legacy codename `codename` is, or null when it is not one. Canonical codenames are never
 * legacy ones: those end in `.<action>` (not `_<action>`), and task ones contain a dot.
 */
export function parseLegacyCodename(codename: string): LegacyCodename | null {
  const document = DOCUMENT.exec(codename);
  if (document !== null) {
    return { kind: 'document', area: document[1] as AreaName, joined: document[2] as string, action: document[3] as DocumentAction };
  }
  const task = FLATTENED_TASK.exec(codename);
  if (task !== null && !Object.hasOwn(ROLES, task[1] as string)) return { kind: 'task', flattened: task[1] as string };
  return null;
}

/** Every grant a legacy document codename could have meant: each split at an `_`, and the database. */
export function documentInterpretations(legacy: Extract<LegacyCodename, { kind: 'document' }>): Grant[] {
  const { area, joined, action } = legacy;
  const grants: Grant[] = [];
  if (area === 'data_store' && isDatabaseName(joined)) grants.push({ kind: 'database', db: joined, action });
  for (let i = joined.indexOf('_'); i !== -1; i = joined.indexOf('_', i + 1)) {
    const db = joined.slice(0, i);
    const col = joined.slice(i + 1);
    if (isDatabaseName(db) && isCollectionName(col)) grants.push({ kind: 'collection', area, db, col, action });
  }
  return grants;
}

export const flattenTaskName = (task: string): string => task.replace(/\./g, '_');

/** What exists now, to narrow legacy codenames down to the grants that can have been meant. */
export interface GrantTargets {
  /** The databases of an area (for the catalog: the configured catalog databases). */
  databases(area: AreaName): Promise<readonly string[]>;
  collections(area: AreaName, db: string): Promise<readonly string[]>;
  /** Task names the service has seen or knows of. */
  taskNames(): Promise<readonly string[]>;
}

export interface Resolution {
  /** What the legacy codename grants from now on (empty: it never granted anything). */
  grants: Grant[];
  /** More than one meaning is kept, so an administrator may want to narrow it down. */
  ambiguous: boolean;
  /** All meanings were kept because none of them exists (or nothing could be looked up). */
  unresolved: boolean;
}

/**
 * Resolves legacy codenames against the databases, collections and tasks that exist. Looks each
 * area and database up once, so one resolver serves a whole batch; make a new one per batch.
 *
 * - Document codenames become the meanings that exist; when none exists, all of them, so no one
 *   loses anything they could do before.
 * - Task codenames become the known tasks whose names flatten to them; when none does, the
 *   codename stays a `legacy_task` grant, matched the old way.
 */
export class LegacyGrantResolver {
  private readonly databases = new Map<AreaName, Promise<ReadonlySet<string>>>();
  private readonly collections = new Map<string, Promise<ReadonlySet<string>>>();
  private tasks: Promise<readonly string[]> | null = null;

  constructor(private readonly targets: GrantTargets | undefined) {}

  async resolve(legacy: LegacyCodename): Promise<Resolution> {
    if (legacy.kind === 'task') {
      const matching = (await this.taskNames()).filter((t) => flattenTaskName(t) === legacy.flattened);
      if (matching.length === 0)
        return { grants: [{ kind: 'legacy_task', flattened: legacy.flattened }], ambiguous: false, unresolved: true };
      return { grants: matching.map((task) => ({ kind: 'task', task })), ambiguous: matching.length > 1, unresolved: false };
    }
    const all = documentInterpretations(legacy);
    const existing: Grant[] = [];
    for (const grant of all) if (await this.exists(grant)) existing.push(grant);
    const grants = existing.length > 0 ? existing : all;
    return { grants, ambiguous: grants.length > 1, unresolved: existing.length === 0 };
  }

  private async exists(grant: Grant): Promise<boolean> {
    if (grant.kind !== 'database' && grant.kind !== 'collection') return false;
    const area = grant.kind === 'database' ? 'data_store' : grant.area;
    if (!(await this.databaseSet(area)).has(grant.db)) return false;
    return grant.kind === 'database' || (await this.collectionSet(area, grant.db)).has(grant.col);
  }

  private databaseSet(area: AreaName): Promise<ReadonlySet<string>> {
    let found = this.databases.get(area);
    if (found === undefined) {
      found = this.targets === undefined ? Promise.resolve(new Set()) : this.targets.databases(area).then((names) => new Set(names));
      this.databases.set(area, found);
    }
    return found;
  }

  private collectionSet(area: AreaName, db: string): Promise<ReadonlySet<string>> {
    const key = JSON.stringify([area, db]);
    let found = this.collections.get(key);
    if (found === undefined) {
      found = this.targets === undefined ? Promise.resolve(new Set()) : this.targets.collections(area, db).then((names) => new Set(names));
      this.collections.set(key, found);
    }
    return found;
  }

  private taskNames(): Promise<readonly string[]> {
    this.tasks ??= this.targets === undefined ? Promise.resolve([]) : this.targets.taskNames();
    return this.tasks;
  }
}
