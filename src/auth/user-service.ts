/**
 * User management for the CLI (createsuperuser), the installer, the admin site and tests.
 * Programmatic callers are trusted with their passwords (no strength rules here: the installer
 * and tests choose them); the HTTP profile endpoint and the createsuperuser command check
 * strength themselves. Every change is in force in every API process once it returns (see
 * AccountDirectory.settle).
 */
import type { Types } from 'mongoose';
import { badRequest, conflict, notFound } from '../errors.js';
import { toPrincipal, type AccountDirectory } from './accounts.js';
import type { ApiTokens } from './api-tokens.js';
import { renewCredentialsGeneration } from './credentials-stamp.js';
import { usernameKey, type AuthModels, type UserRecord } from './models.js';
import type { NewUser, UserService, UserSummary } from './module.js';
import { hashPassword, unusablePassword } from './passwords.js';
import type { PermissionCatalog } from './permission-catalog.js';
import type { Principal } from './principal.js';
import { assertValidEmail, assertValidUsername } from './user-fields.js';

const isDuplicateKey = (err: unknown): boolean => (err as { code?: number }).code === 11000;

const noSuchUser = (username: string) => notFound(`No user named "${username}".`, 'no_such_user');

/** Usernames are unique without case: `taken` is the name as stored, which may differ in case. */
const userExists = (taken: string) =>
  conflict(`A user named "${taken}" already exists (usernames are compared without case).`, 'user_exists');

function summary(user: Pick<UserRecord, '_id' | 'username' | 'email' | 'is_staff' | 'is_superuser' | 'is_active'>): UserSummary {
  return {
    id: user._id.toString(),
    username: user.username,
    email: user.email,
    isStaff: user.is_staff,
    isSuperuser: user.is_superuser,
    isActive: user.is_active,
  };
}

/*
 * Updates are updateOne by _id, never findOneAndUpdate: mongoose would add a projection for the
 * hidden password field, and a plain update by the primary key is the cheapest write on every
 * engine.
 */
export class MongoUserService implements UserService {
  constructor(
    private readonly models: AuthModels,
    private readonly accounts: AccountDirectory,
    private readonly tokens: ApiTokens,
    private readonly catalog: PermissionCatalog,
  ) {}

  async createUser(user: NewUser): Promise<UserSummary> {
    assertValidUsername(user.username);
    const email = user.email ?? '';
    assertValidEmail(email);
    const permissions = await this.catalog.normalize(user.permissions ?? []);
    const groups = await this.groupIds(user.groups ?? []);
    const password = user.password === undefined ? unusablePassword() : await hashPassword(user.password);
    await this.catalog.register(permissions);
    try {
      const created = await this.models.User.create({
        username: user.username,
        email,
        first_name: user.firstName ?? '',
        last_name: user.lastName ?? '',
        password,
        is_active: user.isActive ?? true,
        is_staff: user.isStaff ?? false,
        is_superuser: user.isSuperuser ?? false,
        groups,
        permissions: permissions.map((p) => p.codename),
      });
      return summary(created);
    } catch (err) {
      if (isDuplicateKey(err)) throw userExists(await this.takenName(user.username));
      throw err;
    }
  }

  async ensureSuperuser(user: { username: string; email: string; password: string }): Promise<UserSummary> {
    assertValidUsername(user.username);
    assertValidEmail(user.email);
    const password = await hashPassword(user.password);
    const update = { email: user.email, password, is_superuser: true, is_staff: true, is_active: true };
    const existing = await this.models.User.findOne({ username: user.username }, { _id: 1, username: 1 }).lean().exec();
    if (existing !== null) {
      await this.models.User.updateOne({ _id: existing._id }, { $set: update }).exec();
      await this.accounts.settle({ userIds: [existing._id.toString()] });
      return summary({ ...existing, ...update });
    }
    const variant = await this.models.User.findOne({ username_key: usernameKey(user.username) }, { username: 1 })
      .lean()
      .exec();
    // Another account's name in another case: never turned into this superuser.
    if (variant !== null) throw userExists(variant.username);
    try {
      const created = await this.models.User.create({ username: user.username, ...update });
      return summary(created);
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      // Another run created it in between: updating it is what a re-run wants; a case variant made
      // in between is refused like one found above.
      if ((await this.models.User.exists({ username: user.username })) !== null) return this.ensureSuperuser(user);
      throw userExists(await this.takenName(user.username));
    }
  }

  async setPassword(username: string, password: string): Promise<void> {
    const id = await this.userId(username);
    await this.models.User.updateOne({ _id: id }, { $set: { password: await hashPassword(password) } }).exec();
    // Set by someone else (an administrator, the CLI): the API token goes as well.
    const tokens = await this.models.Token.find({ user: id }, { key_hash: 1 }).lean().exec();
    await this.models.Token.deleteMany({ user: id }).exec();
    await this.accounts.settle({ userIds: [id.toString()], tokenHashes: tokens.map((t) => t.key_hash) });
  }

  async grantPermissions(username: string, codenames: string[]): Promise<void> {
    const parsed = await this.catalog.normalize(codenames);
    const id = await this.userId(username);
    await this.catalog.register(parsed);
    await this.models.User.updateOne({ _id: id }, { $addToSet: { permissions: { $each: parsed.map((p) => p.codename) } } }).exec();
    await this.accounts.settle({ userIds: [id.toString()] });
  }

  async revokePermissions(username: string, codenames: string[]): Promise<void> {
    const parsed = await this.catalog.normalize(codenames);
    const id = await this.userId(username);
    await this.models.User.updateOne({ _id: id }, { $pullAll: { permissions: parsed.map((p) => p.codename) } }).exec();
    await this.accounts.settle({ userIds: [id.toString()] });
  }

  /** Creates the group, or adds the codenames to an existing one (safe for installer re-runs). */
  async createGroup(name: string, codenames: string[]): Promise<void> {
    if (name.trim().length === 0 || name.length > 150) throw badRequest('invalid_group', 'A group name has 1 to 150 characters.');
    const parsed = await this.catalog.normalize(codenames);
    await this.catalog.register(parsed);
    await this.models.Group.updateOne(
      { name },
      { $addToSet: { permissions: { $each: parsed.map((p) => p.codename) } } },
      { upsert: true },
    ).exec();
    // Any cached member may now lack the group's new permissions.
    await this.accounts.settle({ everyone: true });
  }

  async addToGroup(username: string, group: string): Promise<void> {
    const [groupId] = await this.groupIds([group]);
    const id = await this.userId(username);
    await this.models.User.updateOne({ _id: id }, { $addToSet: { groups: groupId } }).exec();
    await this.accounts.settle({ userIds: [id.toString()] });
  }

  async tokenFor(username: string): Promise<string> {
    return this.tokens.rotate(await this.userId(username));
  }

  async endSignedLinks(userId: string): Promise<void> {
    await renewCredentialsGeneration(this.models, this.accounts, userId);
  }

  async principalFor(username: string): Promise<Principal> {
    const account = await this.accounts.byId((await this.userId(username)).toString());
    if (account === null) throw noSuchUser(username);
    return toPrincipal(account, 'token');
  }

  async checkCredentials(username: string, password: string): Promise<Principal | null> {
    const result = await this.accounts.checkCredentials(username, password);
    return result.ok ? toPrincipal(result.account, 'session') : null;
  }

  async idsByUsername(usernames: readonly string[]): Promise<Map<string, string>> {
    if (usernames.length === 0) return new Map();
    const users = await this.models.User.find({ username: { $in: [...new Set(usernames)] } }, { username: 1 })
      .lean()
      .exec();
    return new Map(users.map((u) => [u.username, String(u._id)]));
  }

  /** The stored name a new `username` collides with (itself when the collision has gone since). */
  private async takenName(username: string): Promise<string> {
    const taken = await this.models.User.findOne({ username_key: usernameKey(username) }, { username: 1 })
      .lean()
      .exec();
    return taken?.username ?? username;
  }

  private async userId(username: string): Promise<Types.ObjectId> {
    const user = await this.models.User.findOne({ username }, { _id: 1 }).lean().exec();
    if (user === null) throw noSuchUser(username);
    return user._id;
  }

  private async groupIds(names: readonly string[]): Promise<Types.ObjectId[]> {
    if (names.length === 0) return [];
    const unique = [...new Set(names)];
    const groups = await this.models.Group.find({ name: { $in: unique } }, { name: 1 })
      .lean()
      .exec();
    const missing = unique.filter((n) => !groups.some((g) => g.name === n));
    if (missing.length > 0) throw notFound(`No group named ${missing.map((n) => `"${n}"`).join(', ')}.`, 'no_such_group');
    return unique.map((n) => (groups.find((g) => g.name === n) as { _id: Types.ObjectId })._id);
  }
}
