/** Who is making a request, as every permission check sees it. Built once per request. */
/** `task`: a worker acting for the user who submitted a task. */
export type AuthMethod = 'anonymous' | 'token' | 'jwt' | 'session' | 'task';

export interface Principal {
  readonly authMethod: AuthMethod;
  readonly userId: string | null;
  readonly username: string | null;
  readonly isSuperuser: boolean;
  readonly isStaff: boolean;
  /** Effective permission codenames: the user's own plus those of every group. */
  readonly permissions: ReadonlySet<string>;
}

export const ANONYMOUS: Principal = Object.freeze({
  authMethod: 'anonymous',
  userId: null,
  username: null,
  isSuperuser: false,
  isStaff: false,
  permissions: new Set<string>(),
});

export const isAuthenticated = (p: Principal): boolean => p.userId !== null;
