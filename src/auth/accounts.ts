/**
 * The one place that reads accounts for authentication: by id (sessions, JWTs), by API token
 * key, and by username + password (login). Lookups by id and by token are cached for a couple
 * of seconds, because the data-store benchmark sends thousands of token-authenticated requests
 * per second. Every load takes a lease first (db/cache-leases.ts): a change made through the
 * service, in any API process, drops the affected entries of its own process and then waits out
 * the leases of the others (settle), so once it returns no process uses the account as it was.
 * Changes made in the database by other means are seen within the cache lifetime.
 */
import { createHmac } from 'node:crypto';
import type { AuthMethod, Principal } from './principal.js';
import type { AuthModels, UserRecord } from './models.js';
import { hashTokenKey } from './api-tokens.js';
import { hashPassword, needsRehash, verifyPassword } from './passwords.js';
import { TtlCache } from '../lib/ttl-cache.js';
import { GrantSet } from './grant-set.js';
import { credentialsStamp } from './credentials-stamp.js';
import { InFlight } from '../lib/in-flight.js';
import type { Deadline } from '../lib/deadline.js';
import { operationDeadline } from '../db/deadline.js';
import { DEFAULT_OPERATION_TIMEOUT_MS } from '../config/connections.js';
import type { CacheLeases } from '../db/cache-leases.js';

/** How long a loaded account may be reused without asking the database again, unless SHARED_CACHE_MS says otherwise. */
export const ACCOUNT_CACHE_MS = 2_000;

/** What authentication needs to know about a user; never contains the password hash itself. */
export interface Account {
  id: string;
  username: string;
  isActive: boolean;
  isStaff: boolean;
  isSuperuser: boolean;
  /** Effective codenames: the user's own plus every group's. */
  permissions: ReadonlySet<string>;
  /** The same, parsed once per account load. */
  grants: GrantSet;
  /**
   * A keyed digest of the password hash. Sessions and JWTs carry it, so changing the password
   * ends every other session and invalidates issued JWTs (Django's session auth hash idea).
   */
  passwordStamp: string;
  /** The stamp signed links carry (credentials-stamp.ts): a new password, token or deactivation changes it. */
  credentialsStamp: string;
}

export type CredentialCheck = { ok: true; account: Account } | { ok: false };

export function toPrincipal(account: Account, authMethod: AuthMethod): Principal {
  return Object.freeze({
    authMethod,
    userId: account.id,
    username: account.username,
    isSuperuser: account.isSuperuser,
    isStaff: account.isStaff,
    permissions: account.permissions,
    grants: account.grants,
  });
}

const OBJECT_ID = /^[0-9a-f]{24}$/;

/** The lease keys of a user's account and of an API token key (by its hash), all in one scope. */
const ACCOUNTS_SCOPE = 'accounts';
const userLease = (userId: string): string => `user:${userId}`;
const tokenLease = (keyHash: string): string => `token:${keyHash}`;

export class AccountDirectory {
  private readonly byIdCache: TtlCache<string, Account>;
  /** token key hash → user id (keyed by hash, so this process's memory holds no key either) */
  private readonly tokenCache: TtlCache<string, string>;
  /**
   * Lookups under way, by user id and by token key hash: when an entry expires under load, every
   * request that arrives before the database answers shares the one query instead of sending its
   * own. A lookup that fails or outlasts its deadline is dropped for everyone (see InFlight): one
   * query that the engine never answered must not hold every later request with that token.
   */
  private readonly loadingIds: InFlight<string, Account | null>;
  private readonly loadingTokens: InFlight<string, string | null>;
  /** Bounds every database operation of a look-up or a login (MONGO_OPERATION_TIMEOUT_MS). */
  private readonly deadline: Deadline;

  constructor(
    private readonly models: AuthModels,
    private readonly secretKey: string,
    /** MONGO_OPERATION_TIMEOUT_MS: how long a look-up or a login may wait for the database. */
    lookupTimeoutMs = DEFAULT_OPERATION_TIMEOUT_MS,
    /** Shared with the other API processes; without it, changes are seen elsewhere within the cache time only. */
    private readonly leases?: CacheLeases,
    /** SHARED_CACHE_MS: how long a loaded account or token is reused (the leases' time too). */
    cacheMs = ACCOUNT_CACHE_MS,
  ) {
    this.byIdCache = new TtlCache(cacheMs);
    this.tokenCache = new TtlCache(cacheMs);
    this.deadline = operationDeadline(lookupTimeoutMs);
    this.loadingIds = new InFlight(this.deadline);
    this.loadingTokens = new InFlight(this.deadline);
  }

  passwordStamp(passwordHash: string): string {
    return createHmac('sha256', this.secretKey).update(`password-stamp\0${passwordHash}`).digest('base64url').slice(0, 22);
  }

  /** The account with this id, or null when there is none (inactive accounts are returned). */
  async byId(id: string): Promise<Account | null> {
    if (!OBJECT_ID.test(id)) return null;
    const cached = this.byIdCache.get(id);
    if (cached !== undefined) return cached;
    return this.loadingIds.share(id, async (signal) => {
      const until = await this.lease(userLease(id));
      const user = await this.models.User.findById(id).select('+password').setOptions({ signal }).lean<UserRecord>().exec();
      if (user === null) return null;
      const account = await this.toAccount(user, signal);
      // A look-up given up at its deadline leaves nothing behind, not even a late answer.
      if (!signal.aborted) this.byIdCache.set(id, account, until);
      return account;
    });
  }

  /** The account owning API token `key`, or null for an unknown key. */
  async byTokenKey(key: string): Promise<Account | null> {
    const keyHash = hashTokenKey(key);
    const userId =
      this.tokenCache.get(keyHash) ??
      (await this.loadingTokens.share(keyHash, async (signal) => {
        const until = await this.lease(tokenLease(keyHash));
        const token = await this.models.Token.findOne({ key_hash: keyHash }, { user: 1 }).setOptions({ signal }).lean().exec();
        if (token === null) return null;
        const owner = token.user.toString();
        if (!signal.aborted) this.tokenCache.set(keyHash, owner, until);
        return owner;
      }));
    return userId === null ? null : this.byId(userId);
  }

  /**
   * Verifies a username and password. Unknown users, wrong passwords and inactive accounts all
   * fail the same way (and take the same time). A good login records last_login and upgrades an
   * old hash to today's scrypt parameters.
   */
  checkCredentials(username: string, password: string): Promise<CredentialCheck> {
    return this.deadline(async (signal) => {
      const user = await this.models.User.findOne({ username }).select('+password').setOptions({ signal }).lean<UserRecord>().exec();
      const matches = await verifyPassword(password, user?.password);
      if (user === null || !matches || !user.is_active) return { ok: false };
      const update: Partial<UserRecord> = { last_login: new Date() };
      if (needsRehash(user.password)) update.password = await hashPassword(password);
      await this.models.User.updateOne({ _id: user._id }, { $set: update }).setOptions({ signal }).exec();
      this.forgetUser(user._id.toString());
      return { ok: true, account: await this.toAccount({ ...user, ...update }, signal) };
    });
  }

  /**
   * Until when an entry about to be loaded may be used: the full cache time when no leases are
   * shared; 0 (not cached) when the lease could not be recorded, so that no change made through
   * another process has to wait for a copy it cannot see.
   */
  private async lease(key: string): Promise<number | undefined> {
    if (this.leases === undefined) return undefined;
    return (await this.leases.take(key, ACCOUNTS_SCOPE, false)).until ?? 0;
  }

  /**
   * After a change made through the service: forgets what this process cached and waits until no
   * other API process may still use a copy loaded before the change (see CacheLeases.waitOut).
   * `userIds` are the accounts changed, `tokenHashes` the API token keys that changed hands or
   * stopped working; `everyone` for a change any account may feel (a group's permissions).
   */
  async settle(change: { userIds?: readonly string[]; tokenHashes?: readonly string[]; everyone?: boolean }): Promise<void> {
    const users = change.userIds ?? [];
    const tokens = change.tokenHashes ?? [];
    if (change.everyone === true) this.forgetAll();
    for (const id of users) this.forgetUser(id);
    for (const hash of tokens) this.forgetToken(hash);
    if (this.leases === undefined) return;
    if (change.everyone === true) {
      await this.leases.waitOutScope(ACCOUNTS_SCOPE);
      return;
    }
    const keys = [...users.map(userLease), ...tokens.map(tokenLease)];
    if (keys.length > 0) await this.leases.waitOut({ _id: { $in: keys } });
  }

  forgetUser(userId: string): void {
    this.byIdCache.delete(userId);
    this.loadingIds.forget(userId);
  }

  /** After a rotation: `keyHash` is the stored hash of the key that no longer works. */
  forgetToken(keyHash: string): void {
    this.tokenCache.delete(keyHash);
    this.loadingTokens.forget(keyHash);
  }

  /** After group changes: any cached account may hold stale group permissions. */
  forgetAll(): void {
    this.byIdCache.clear();
    this.tokenCache.clear();
    this.loadingIds.clear();
    this.loadingTokens.clear();
  }

  private async toAccount(user: UserRecord, signal: AbortSignal): Promise<Account> {
    const permissions = new Set(user.permissions);
    if (user.groups.length > 0) {
      const groups = await this.models.Group.find({ _id: { $in: user.groups } }, { permissions: 1 })
        .setOptions({ signal })
        .lean()
        .exec();
      for (const group of groups) for (const code of group.permissions) permissions.add(code);
    }
    return Object.freeze({
      id: user._id.toString(),
      username: user.username,
      isActive: user.is_active,
      isStaff: user.is_staff,
      isSuperuser: user.is_superuser,
      permissions,
      grants: GrantSet.fromCodenames(permissions),
      passwordStamp: this.passwordStamp(user.password),
      credentialsStamp: credentialsStamp(this.secretKey, user.password, user.credentials_generation),
    });
  }
}
