/**
 * A TTL index on `expires` (documents are deleted by the database once that date has passed).
 * An engine without TTL indexes (NotImplemented) keeps expired documents on disk; callers never
 * trust an expired one anyway. Any other failure (the database unreachable) is thrown.
 */
import { MongoServerError, type Collection } from 'mongodb';
import { retryOnDeadlock } from './deadlock-retry.js';

const NOT_IMPLEMENTED = 238;

export async function ensureExpiryIndex(collection: Collection): Promise<void> {
  try {
    await retryOnDeadlock(() => collection.createIndex({ expires: 1 }, { expireAfterSeconds: 0 }));
  } catch (err) {
    if (!(err instanceof MongoServerError && err.code === NOT_IMPLEMENTED)) throw err;
  }
}
