/**
 * API tokens (DRF authtoken style): one random 40-hex-character key per user, replaced by
 * rotation. Only a SHA-256 hash of the key (what lookups use) and its first characters (so
 * people can tell tokens apart) are stored: whoever reads the database — a backup, the worker's
 * credentials on an engine without roles — learns no usable key. So the whole key is known only
 * in the answer to the request that makes it, and never again.
 *
 * A rotated key stops working at once in this process (the lookup cache entry is dropped) and
 * within the cache lifetime in any other process.
 */
import { hash, randomBytes } from 'node:crypto';
import type { Types } from 'mongoose';
import type { AuthModels } from './models.js';
import { renewCredentialsGeneration, type AccountCache } from './credentials-stamp.js';

/** How much of a key is stored and shown: enough to tell tokens apart, far too little to use one. */
export const TOKEN_PREFIX_LENGTH = 8;

export function newTokenKey(): string {
  return randomBytes(20).toString('hex');
}

/**
 * The stored form of a key. A plain (unsalted) hash is enough: keys are 160 random bits, so
 * there is nothing to guess, and an unsalted hash can be looked up by equality. Every request
 * with a token hashes it: the one-shot `hash` costs about a third of a Hash object's round.
 */
export function hashTokenKey(key: string): string {
  return hash('sha256', key, 'hex');
}

/** The fields stored for `key`. */
export function storedTokenFields(key: string): { key_hash: string; key_prefix: string } {
  return { key_hash: hashTokenKey(key), key_prefix: key.slice(0, TOKEN_PREFIX_LENGTH) };
}

/** What may be shown about a stored token. */
export interface TokenSummary {
  prefix: string;
  created: Date;
}

const isDuplicateKey = (err: unknown): boolean => (err as { code?: number }).code === 11000;

/** Where token lookups and accounts are cached (the AccountDirectory): a rotated key is dropped from it. */
export interface TokenLookupCache extends AccountCache {
  /** Forgets the key here and waits until no other API process may still take it (AccountDirectory.settle). */
  settle(change: { userIds?: readonly string[]; tokenHashes?: readonly string[] }): Promise<void>;
}

export class ApiTokens {
  constructor(
    private readonly models: AuthModels,
    private readonly accounts: TokenLookupCache,
  ) {}

  /** The user's token without its key, or null when the user has none. */
  async summary(userId: Types.ObjectId): Promise<TokenSummary | null> {
    const token = await this.models.Token.findOne({ user: userId }, { key_prefix: 1, created: 1 }).lean().exec();
    return token === null ? null : { prefix: token.key_prefix, created: token.created };
  }

  /**
   * Creates the user's first token and returns its key; null when the user already has one
   * (whose key cannot be shown again), including when a simultaneous request just made it.
   */
  async createIfMissing(userId: Types.ObjectId): Promise<string | null> {
    if ((await this.summary(userId)) !== null) return null;
    const key = newTokenKey();
    try {
      await this.models.Token.create({ ...storedTokenFields(key), user: userId, created: new Date() });
      return key;
    } catch (err) {
      // Two first requests raced: the unique index on `user` kept the other one's token.
      if (isDuplicateKey(err)) return null;
      throw err;
    }
  }

  /**
   * Gives the user a new key (creating the token if needed) and returns it; the old key stops
   * working, and so does every signed link the user made (whoever held the old key may have made them).
   */
  async rotate(userId: Types.ObjectId): Promise<string> {
    const key = newTokenKey();
    const previous = await this.models.Token.findOneAndUpdate(
      { user: userId },
      { $set: { ...storedTokenFields(key), created: new Date() } },
      { upsert: true, returnDocument: 'before', projection: { key_hash: 1 } },
    )
      .lean()
      .exec();
    if (previous !== null) await this.accounts.settle({ tokenHashes: [previous.key_hash] });
    await renewCredentialsGeneration(this.models, this.accounts, userId);
    return key;
  }
}
