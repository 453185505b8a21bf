/** Permission guards shared by the document routes: 401 for anonymous callers, 403 otherwise. */
import type { Principal } from '../auth/principal.js';
import { isAuthenticated } from '../auth/principal.js';
import { actionForMethod, canAccessCollection, canManageContainers, canSeeDatabase, type DocumentAction } from '../auth/permissions.js';
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

/**
 * The refusal a write with a body gets from its URL alone, before the body is read: the route
 * (`/`, `/:db/`, `/:db/:col/`, `/:db/:col/:id/` under the area's mount, as decoded path
 * segments) and the method decide the permission the handler will ask for. Undefined when the
 * URL allows the write or does not decide it (a route the method is not served on answers its
 * own 404 or 405 after the body).
 */
export function writeRefusal(p: Principal, area: DocumentArea, method: string, segments: readonly string[]): ApiError | undefined {
  const [db, col] = segments;
  switch (segments.length) {
    case 0:
      return method === 'POST' && area.canCreateDatabases && !canManageContainers(p, area.name) ? denied(p) : undefined;
    case 1:
      return method === 'POST' && !canManageContainers(p, area.name) ? denied(p) : undefined;
    case 2:
    case 3: {
      const served = segments.length === 2 ? ['POST', 'PATCH', 'DELETE'] : ['PUT', 'PATCH', 'DELETE'];
      if (!served.includes(method)) return undefined;
      return canAccessCollection(p, area.name, db!, col!, actionForMethod(method), area.policy) ? undefined : denied(p);
    }
    default:
      return undefined;
  }
}
