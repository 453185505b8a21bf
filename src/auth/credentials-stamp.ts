/**
 * The credentials stamp: a keyed digest of what a user's credentials are at the moment, which
 * signed links carry (src/links) so that a link dies with the credentials it was made under.
 * It covers the password hash — so every path that sets a password (the user's own change, an
 * administrator's reset on the admin site or the CLI, the installer) ends the user's links without
 * having to remember to — and the credentials generation, a random value renewed where
 * credentials are revoked but the password stays: the API token rotated or revoked, the account
 * deactivated. Unlike the password stamp of sessions and JWTs, a new token does not touch it.
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { Types } from 'mongoose';
import type { AuthModels } from './models.js';

/** A fresh credentials generation for `credentials_generation`. */
export function newCredentialsGeneration(): string {
  return randomBytes(12).toString('base64url');
}

/** The stamp of a password hash and credentials generation (a missing generation is the empty one). */
export function credentialsStamp(secretKey: string, passwordHash: string, generation: string | undefined): string {
  return createHmac('sha256', secretKey)
    .update(`credentials-stamp\0${passwordHash}\0${generation ?? ''}`)
    .digest('base64url')
    .slice(0, 22);
}

/** Where accounts are cached: a renewed generation is in force in every API process once settled (AccountDirectory.settle). */
export interface AccountCache {
  settle(change: { userIds: readonly string[] }): Promise<void>;
}

/** Renews the user's credentials generation: every signed link the user made stops working. */
export async function renewCredentialsGeneration(models: AuthModels, cache: AccountCache, userId: Types.ObjectId | string): Promise<void> {
  await models.User.updateOne({ _id: userId }, { $set: { credentials_generation: newCredentialsGeneration() } }).exec();
  await cache.settle({ userIds: [userId.toString()] });
}
