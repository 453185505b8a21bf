/**
 * API tokens (DRF authtoken style): one random 40-hex-character key per user, created on first
 * use, replaced by rotation. A rotated key stops working at once in this process (the lookup
 * cache entry is dropped) and within the cache lifetime in any other process.
 */
import { randomBytes } from 'node:crypto';
import type { Types } from 'mongoose';
import type { AccountDirectory } from './accounts.js';
import type { AuthModels } from './models.js';

export function newTokenKey(): string {
  return randomBytes(20).toString('hex');
}

const isDuplicateKey = (err: unknown): boolean => (err as { code?: number }).code === 11000;

export class ApiTokens {
  constructor(
    private readonly models: AuthModels,
    private readonly accounts: AccountDirectory,
  ) {}

  async keyFor(userId: Types.ObjectId): Promise<string> {
    const existing = await this.models.Token.findOne({ user: userId }, { key: 1 }).lean().exec();
    if (existing !== null) return existing.key;
    try {
      const created = await this.models.Token.create({ key: newTokenKey(), user: userId, created: new Date() });
      return created.key;
    } catch (err) {
      // Two first requests raced: the unique index on `user` kept one token; use it.
      if (!isDuplicateKey(err)) throw err;
      const winner = await this.models.Token.findOne({ user: userId }, { key: 1 }).lean().exec();
      if (winner === null) throw err;
      return winner.key;
    }
  }

  async rotate(userId: Types.ObjectId): Promise<string> {
    const key = newTokenKey();
    const previous = await this.models.Token.findOneAndUpdate(
      { user: userId },
      { $set: { key, created: new Date() } },
      { upsert: true, returnDocument: 'before' },
    )
      .lean()
      .exec();
    if (previous !== null) this.accounts.forgetToken(previous.key);
    return key;
  }
}
