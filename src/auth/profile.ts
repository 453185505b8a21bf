/**
 * The caller's own profile (/api/user/): what it shows and what a user may change about
 * themselves. Every change is validated in full before anything is written, so a request that
 * fails leaves the account exactly as it was.
 */
import type { Types } from 'mongoose';
import { badRequest, notFound } from '../errors.js';
import type { AccountDirectory } from './accounts.js';
import { TOKEN_PREFIX_LENGTH, type ApiTokens } from './api-tokens.js';
import type { AuthModels, UserRecord } from './models.js';
import { hashPassword, verifyPassword } from './passwords.js';
import { assertStrongPassword } from './password-strength.js';
import { assertValidEmail } from './user-fields.js';

export interface ProfileLinks {
  obtainToken: string;
  refreshToken: string;
  verifyToken: string;
}

export interface Profile {
  username: string;
  email: string;
  first_name: string;
  last_name: string;
  name: string;
  groups: string[];
  authentication: {
    /** The whole key only in the answer that made it (first read, rotation); null otherwise. */
    'auth-token': string | null;
    /** The key's first characters, so the user can tell which key they hold; null without a token. */
    'auth-token-prefix': string | null;
    'auth-token-note': string;
    'jwt-auth': { 'obtain-token': string; 'refresh-token': string; 'verify-token': string };
  };
}

export interface ProfileChanges {
  rotateToken?: boolean;
  password?: { current: string; next: string };
  first_name?: string;
  last_name?: string;
  email?: string;
}

export interface ProfileUpdateResult {
  /** Set when the password changed: sessions must be re-stamped to stay logged in. */
  newPasswordStamp?: string;
  /** Set when the API token was rotated: the new key, which only this answer may show. */
  newTokenKey?: string;
}

export const TOKEN_NOTE =
  'API token keys are stored hashed and shown only in the answer that makes them. POST {"auth-token": "update"} here for a new key; the current one stops working.';

const accountGone = () => notFound('This account no longer exists.', 'no_such_user');

export class Profiles {
  constructor(
    private readonly models: AuthModels,
    private readonly accounts: AccountDirectory,
    private readonly tokens: ApiTokens,
  ) {}

  /**
   * The profile. A user without a token gets one now, and this answer shows its key; `issuedKey`
   * is a key the caller has just made (rotation), shown instead.
   */
  async read(userId: string, links: ProfileLinks, issuedKey?: string): Promise<Profile> {
    const user = await this.models.User.findById(userId).lean<UserRecord>().exec();
    if (user === null) throw accountGone();
    const [groups, key] = await Promise.all([this.groupNames(user.groups), issuedKey ?? this.tokens.createIfMissing(user._id)]);
    const prefix = key !== null ? key.slice(0, TOKEN_PREFIX_LENGTH) : ((await this.tokens.summary(user._id))?.prefix ?? null);
    return {
      username: user.username,
      email: user.email,
      first_name: user.first_name,
      last_name: user.last_name,
      name: `${user.first_name} ${user.last_name}`.trim(),
      groups,
      authentication: {
        'auth-token': key,
        'auth-token-prefix': prefix,
        'auth-token-note': TOKEN_NOTE,
        'jwt-auth': { 'obtain-token': links.obtainToken, 'refresh-token': links.refreshToken, 'verify-token': links.verifyToken },
      },
    };
  }

  /**
   * Applies `changes`. A wrong current password is reported through `onWrongPassword` (the
   * caller counts it against the login throttle, and may answer with an error of its own) and
   * then refused with 400.
   */
  async update(userId: string, changes: ProfileChanges, onWrongPassword: () => Promise<void>): Promise<ProfileUpdateResult> {
    const user = await this.models.User.findById(userId).select('+password').lean<UserRecord>().exec();
    if (user === null) throw accountGone();

    const set: Partial<Pick<UserRecord, 'first_name' | 'last_name' | 'email' | 'password'>> = {};
    if (changes.email !== undefined) {
      assertValidEmail(changes.email);
      set.email = changes.email;
    }
    if (changes.first_name !== undefined) set.first_name = changes.first_name;
    if (changes.last_name !== undefined) set.last_name = changes.last_name;
    if (changes.password !== undefined) {
      if (!(await verifyPassword(changes.password.current, user.password))) {
        await onWrongPassword();
        throw badRequest('wrong_password', 'The current password is not correct.', {
          fields: [{ field: 'current_password', message: 'Incorrect password.' }],
        });
      }
      assertStrongPassword(changes.password.next, user.username);
      set.password = await hashPassword(changes.password.next);
    }

    if (Object.keys(set).length > 0) {
      await this.models.User.updateOne({ _id: user._id }, { $set: set }).exec();
      await this.accounts.settle({ userIds: [userId] });
    }
    // A new password replaces the API token too: whoever learnt the old password may have made or
    // rotated the token through the profile. The answer to this request shows the new key.
    const hadToken = set.password !== undefined && (await this.tokens.summary(user._id)) !== null;
    const result: ProfileUpdateResult = {};
    if (changes.rotateToken === true || hadToken) result.newTokenKey = await this.tokens.rotate(user._id);
    if (set.password !== undefined) result.newPasswordStamp = this.accounts.passwordStamp(set.password);
    return result;
  }

  private async groupNames(ids: readonly Types.ObjectId[]): Promise<string[]> {
    if (ids.length === 0) return [];
    const groups = await this.models.Group.find({ _id: { $in: ids } }, { name: 1 })
      .lean()
      .exec();
    return groups.map((g) => g.name).sort();
  }
}
