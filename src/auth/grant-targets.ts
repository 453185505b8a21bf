/**
 * The databases, collections and tasks that exist, as the legacy-codename migration and the
 * permission catalog look them up: the document areas' own listings, and the task names the
 * submission log holds (its owner, the queue module, answers; cheap to ask at start-up, unlike
 * the live workers).
 */
import type { AreaName } from './grants.js';
import type { GrantTargets } from './legacy-grants.js';

/** The part of a document area the lookups need. */
export interface ListableArea {
  databaseNames(): Promise<string[]>;
  store: { collectionNames(db: string): Promise<string[]> };
}

export function grantTargets(
  areas: { dataStore: ListableArea; catalog: ListableArea },
  submittedTaskNames: () => Promise<string[]>,
): GrantTargets {
  const area = (name: AreaName): ListableArea => (name === 'data_store' ? areas.dataStore : areas.catalog);
  return {
    databases: (name) => area(name).databaseNames(),
    collections: (name, db) => area(name).store.collectionNames(db),
    taskNames: submittedTaskNames,
  };
}
