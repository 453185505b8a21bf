/** The contract between the auth module and the rest of the service (see src/auth/index.ts). */
import type { RequestHandler, Router } from 'express';
import type { SessionOptions } from 'express-session';
import type { Db, MongoClient } from 'mongodb';
import type { Settings } from '../config/settings.js';
import type { Logger } from '../log/logger.js';
import type { GrantTargets } from './legacy-grants.js';
import type { DelegationGuard } from './delegation-guard.js';
import type { LoginThrottle } from './login-throttle.js';
import type { AuthModels } from './models.js';
import type { PermissionCatalog } from './permission-catalog.js';
import type { Principal } from './principal.js';

export interface AuthDeps {
  settings: Settings;
  logger: Logger;
  mongo: MongoClient;
  /** The service's own database: users, groups, permissions, tokens, sessions live here. */
  db: Db;
  /**
   * The databases, collections and tasks that exist. Given by the service: legacy permission
   * codenames are then migrated at start-up and read against it as input. Tools that only
   * manage accounts (createsuperuser, the installer) leave it out and migrate nothing.
   */
  grantTargets?: GrantTargets;
}

export interface NewUser {
  username: string;
  email?: string;
  password?: string;
  firstName?: string;
  lastName?: string;
  isStaff?: boolean;
  isSuperuser?: boolean;
  isActive?: boolean;
  permissions?: string[];
  groups?: string[];
}

export interface UserSummary {
  id: string;
  username: string;
  email: string;
  isStaff: boolean;
  isSuperuser: boolean;
  isActive: boolean;
}

/** User management used by the CLI (createsuperuser), the installer, the admin site and tests. */
export interface UserService {
  createUser(user: NewUser): Promise<UserSummary>;
  /** Creates the superuser or updates its e-mail/password when it exists (installer re-runs). */
  ensureSuperuser(user: { username: string; email: string; password: string }): Promise<UserSummary>;
  setPassword(username: string, password: string): Promise<void>;
  grantPermissions(username: string, codenames: string[]): Promise<void>;
  /** Takes the codenames from the user's own permissions (a group's stay); in force in every API process once it returns. */
  revokePermissions(username: string, codenames: string[]): Promise<void>;
  createGroup(name: string, codenames: string[]): Promise<void>;
  addToGroup(username: string, group: string): Promise<void>;
  /**
   * Issues the user a new API token key and returns it; any previous key stops working. Only a
   * hash is stored, so an existing key can never be read back: this is the one moment it is known.
   */
  tokenFor(username: string): Promise<string>;
  /**
   * Ends every signed link the user made (renews their credentials generation), for revocations
   * that change neither password nor token key: an API token deleted, for one. A password set here
   * and a token issued here end them by themselves.
   */
  endSignedLinks(userId: string): Promise<void>;
  principalFor(username: string): Promise<Principal>;
  /** The user's principal when the password is right and the account active, else null (admin site login). */
  checkCredentials(username: string, password: string): Promise<Principal | null>;
  /** The ids of the accounts that bear these names now (names of no account are left out). */
  idsByUsername(usernames: readonly string[]): Promise<Map<string, string>>;
}

/** The user a signed link speaks for, as they are now. */
export interface LinkHolder {
  principal: Principal;
  /** The credentials stamp (credentials-stamp.ts): a link made under another one is void. */
  credentials: string;
}

export interface AuthModule {
  /** express-session with the MongoDB store (expired sessions removed by a TTL index). */
  session: RequestHandler;
  /** Sets req.principal from Bearer JWT, Token key or session, in that order. */
  authenticate: RequestHandler;
  /** Session-authenticated unsafe requests need X-CSRFToken equal to the csrftoken cookie. */
  csrf: RequestHandler;
  /** /auth/login/, /auth/logout/, /user/, /token/, /token/refresh/, /token/verify/ (mounted at /api). */
  router: Router;
  users: UserService;
  /** An active user as signed links see them, or null for an unknown or disabled one. */
  linkHolder(userId: string): Promise<LinkHolder | null>;
  /** An active user as the scheduler acts for them (their rights now), or null for an unknown or disabled one. */
  scheduleOwner(userId: string): Promise<Principal | null>;
  /** The mongoose models (User, Group, Permission, Token) on the service database, for the admin site. */
  models: AuthModels;
  /** Checks and registers the codenames the admin site grants. */
  permissionCatalog: PermissionCatalog;
  /** Who may grant which rights and manage whose token (the admin site asks before every such write). */
  delegation: DelegationGuard;
  /** The login throttle's counts, which an operator may clear (the admin site's user page). */
  loginFailures: Pick<LoginThrottle, 'clear'>;
  /** The session's store, cookie name, secret and cookie flags, so the admin site shares the login. */
  sessionOptions: SessionOptions;
  close(): Promise<void>;
}
