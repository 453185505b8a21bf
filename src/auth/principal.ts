/** Who is making a request, as every permission check sees it. Built once per request. */
import { GrantSet } from './grant-set.js';

/**
 * `task`: a worker acting for the user who submitted a task; `link`: a signed link's URL (src/links);
 * `schedule`: the scheduler firing a schedule as its owner.
 */
export type AuthMethod = 'anonymous' | 'token' | 'jwt' | 'session' | 'task' | 'link' | 'schedule';

export interface Principal {
  readonly authMethod: AuthMethod;
  readonly userId: string | null;
  readonly username: string | null;
  readonly isSuperuser: boolean;
  readonly isStaff: boolean;
  /** Effective permission codenames, as stored: the user's own plus those of every group. */
  readonly permissions: ReadonlySet<string>;
  /** The same permissions parsed into grants; every permission check asks this. */
  readonly grants: GrantSet;
}

export const ANONYMOUS: Principal = Object.freeze({
  authMethod: 'anonymous',
  userId: null,
  username: null,
  isSuperuser: false,
  isStaff: false,
  permissions: new Set<string>(),
  grants: GrantSet.EMPTY,
});

export const isAuthenticated = (p: Principal): boolean => p.userId !== null;
