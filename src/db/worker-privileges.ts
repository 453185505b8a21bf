/**
 * Keeps the workers' database role (worker-role.ts) in step with the data store: a database the
 * API creates is added to it, one the API deletes is removed, and at start-up the role is
 * brought in line with the databases that exist.
 *
 * Never in the way of a request. Engines without role commands (FerretDB, the local runtime's
 * engine, answers CommandNotFound) and servers without the role (a database not set up by the
 * installer) are detected on the first attempt, logged once, and left alone from then on. Any
 * other failure (e.g. an API login from before this role existed) is logged and the request
 * goes on; the next start-up reconciles again.
 */
import { MongoServerError, type Db, type Document } from 'mongodb';
import type { Logger } from '../log/logger.js';
import { dataStorePrivilege, grantedDatabases, ROLE_DATABASE, type Privilege } from './worker-role.js';

const COMMAND_NOT_FOUND = 59;
const COMMAND_NOT_SUPPORTED = 115;
const NOT_IMPLEMENTED = 238;
const ROLE_NOT_FOUND = 31;

const hasCode = (err: unknown, ...codes: number[]): boolean => err instanceof MongoServerError && codes.includes(err.code as number);

export class WorkerPrivileges {
  /** Why role commands are no longer tried, once known. */
  private skipped: string | null = null;

  constructor(
    /** The `admin` database of the API's client. */
    private readonly admin: Db,
    /** The worker role's name; empty to manage nothing. */
    private readonly role: string,
    private readonly serviceDatabase: string,
    private readonly logger: Logger,
  ) {
    if (role === '') this.skipped = 'disabled';
  }

  /** True once role commands are known not to apply here (engine without roles, no role, disabled). */
  get inactive(): boolean {
    return this.skipped !== null;
  }

  async grant(database: string): Promise<void> {
    await this.run({ grantPrivilegesToRole: this.role, privileges: [dataStorePrivilege(database)] });
  }

  async revoke(database: string): Promise<void> {
    await this.run({ revokePrivilegesFromRole: this.role, privileges: [dataStorePrivilege(database)] });
  }

  /**
   * Grants every data-store database `listDatabases` returns and revokes the ones it no longer
   * does. The role is read before the databases are listed: a database another API process
   * creates meanwhile is either in the list or not yet in the role, so it is never revoked.
   */
  async reconcile(listDatabases: () => Promise<string[]>): Promise<void> {
    const info = await this.run({ rolesInfo: { role: this.role, db: ROLE_DATABASE }, showPrivileges: true });
    if (info === undefined) return;
    const role = (info.roles as { privileges?: Privilege[] }[] | undefined)?.[0];
    if (role === undefined) {
      this.skip(`no role "${this.role}" on this server`);
      return;
    }
    const granted = new Set(grantedDatabases(role.privileges ?? [], this.serviceDatabase));
    const wanted = new Set(await listDatabases());
    const missing = [...wanted].filter((db) => !granted.has(db));
    const stale = [...granted].filter((db) => !wanted.has(db));
    if (missing.length > 0) await this.run({ grantPrivilegesToRole: this.role, privileges: missing.map(dataStorePrivilege) });
    if (stale.length > 0) await this.run({ revokePrivilegesFromRole: this.role, privileges: stale.map(dataStorePrivilege) });
    if (missing.length + stale.length > 0)
      this.logger.info({ role: this.role, granted: missing, revoked: stale }, 'worker database role reconciled with the data store');
  }

  private skip(reason: string): void {
    this.skipped = reason;
    this.logger.info(
      { role: this.role },
      `worker database privileges are not managed: ${reason} (workers' access is then whatever their database login allows)`,
    );
  }

  private async run(command: Document): Promise<Document | undefined> {
    if (this.skipped !== null) return undefined;
    try {
      return await this.admin.command(command);
    } catch (err) {
      if (hasCode(err, COMMAND_NOT_FOUND, COMMAND_NOT_SUPPORTED, NOT_IMPLEMENTED))
        this.skip('this database engine has no role commands, so it cannot enforce roles');
      else if (hasCode(err, ROLE_NOT_FOUND)) this.skip(`no role "${this.role}" on this server`);
      else
        this.logger.warn(
          { err: (err as Error).message, command: Object.keys(command)[0], role: this.role },
          'could not update the worker database role',
        );
      return undefined;
    }
  }
}
