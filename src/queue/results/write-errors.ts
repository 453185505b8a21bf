/**
 * Sorting failed result writes into the ones worth retrying and the ones that will fail the
 * same way every time. Transient: the database is away or restarting (the same conditions the
 * API answers 503 for), or two writers raced on one document. Permanent: the server or the
 * driver refuses this document itself (too large, a value BSON cannot encode, a key the engine
 * will not store). Unknown driver errors count as transient, so only known refusals give up.
 */
import { BSON, MongoError, MongoInvalidArgumentError, MongoServerError } from 'mongodb';
import { classifyDatabaseError, serverMessage } from '../../db/errors.js';

export function isTransientWriteError(error: unknown): boolean {
  const classified = classifyDatabaseError(error);
  if (classified !== undefined) return classified.transient;
  // Any other code the server answers with is about this document (BSONObjectTooLarge, an
  // unstorable key, ...): writing it again fails the same way. 13 (Unauthorized) is not, as the
  // worker's login may be granted its role again.
  if (error instanceof MongoServerError && typeof error.code === 'number' && error.code > 0 && error.code !== 13) return false;
  if (BSON.BSONError.isBSONError(error) || error instanceof MongoInvalidArgumentError) return false;
  // Anything else from the driver (an unexpected server code, a closed pool): retry as before.
  if (error instanceof MongoError) return true;
  // Thrown while building the document (e.g. a value JSON cannot carry): the same every time.
  return false;
}

/** Why the write was refused, in words fit for a stored result (no server internals). */
export function describeWriteRefusal(error: unknown): string {
  if (error instanceof MongoServerError) return `the database refused the document: ${serverMessage(error)}`;
  if (error instanceof Error) return `the document could not be encoded: ${error.message}`;
  return `the document could not be stored: ${String(error)}`;
}
