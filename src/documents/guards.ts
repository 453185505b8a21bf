/** Permission guards shared by the document routes: 401 for anonymous callers, 403 otherwise. */
import type { Principal } from '../auth/principal.js';
import { isAuthenticated } from '../auth/principal.js';
import { canAccessCollection, canManageContainers, canSeeDatabase, type DocumentAction } from '../auth/permissions.js';
import { forbidden, unauthenticated, type ApiError } from '../errors.js';
import type { DocumentArea } from './area.js';

export function denied(p: Principal): ApiError {
  return isAuthenticated(p) ? forbidden() : unauthenticated();
}

export function requireSeeDatabase(p: Principal, area: DocumentArea, db: string): void {
  if (!canSeeDatabase(p, area.name, db, area.policy)) throw denied(p);
}

export function requireManage(p: Principal, area: DocumentArea): void {
  if (!canManageContainers(p, area.name)) throw denied(p);
}

export function requireCollection(p: Principal, area: DocumentArea, db: string, col: string, action: DocumentAction): void {
  if (!canAccessCollection(p, area.name, db, col, action, area.policy)) throw denied(p);
}

/** Listing the databases of an area needs a signed-in user unless anonymous reads are on. */
export function requireListDatabases(p: Principal, area: DocumentArea): void {
  if (!isAuthenticated(p) && !area.policy.anonymousRead) throw unauthenticated();
}
