/** What the admin site's resources and actions are built from. */
import type { DelegationGuard } from '../auth/delegation-guard.js';
import type { AuthModels } from '../auth/models.js';
import type { AuthModule, UserService } from '../auth/module.js';
import type { PermissionCatalog } from '../auth/permission-catalog.js';
import type { RightsWatch } from '../auth/rights-watch.js';
import type { DocumentArea } from '../documents/area.js';

export interface AdminDeps {
  title: string;
  models: AuthModels;
  users: UserService;
  /** The catalog of known codenames (auth_permission); every codename the admin grants is registered. */
  catalog: PermissionCatalog;
  /** The login throttle's counts: the user page's "Clear login failures" action clears an account's. */
  loginFailures: AuthModule['loginFailures'];
  /** Asked before every write that grants rights or hands out a token. */
  delegation: DelegationGuard;
  areas: { dataStore: DocumentArea; catalog: DocumentArea };
  /**
   * Runs an account change that may take rights away (deactivating, deleting, removing a
   * permission or a group), telling the queue whose queued tasks to revoke.
   */
  watchRights: RightsWatch;
  /** Registered task names for the permission picker; absent when the queue is not wired in. */
  taskNames: (() => Promise<string[]>) | undefined;
}
