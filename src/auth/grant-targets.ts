/**
 * The databases, collections and tasks that exist, as the legacy-codename migration and the
 * permission catalog look them up. Auth is handed lookups, not the document areas: the areas'
 * own listings and the task names the submission log holds (its owner, the queue module, answers;
 * cheap to ask at start-up, unlike the live workers) come in as functions.
 */
import type { AreaName } from './grants.js';
import type { GrantTargets } from './legacy-grants.js';

/** How the lookups read what exists in a document area. */
export interface AreaListings {
  databaseNames(area: AreaName): Promise<string[]>;
  collectionNames(area: AreaName, db: string): Promise<string[]>;
}

export function grantTargets(listings: AreaListings, submittedTaskNames: () => Promise<string[]>): GrantTargets {
  return {
    databases: (area) => listings.databaseNames(area),
    collections: (area, db) => listings.collectionNames(area, db),
    taskNames: submittedTaskNames,
  };
}
