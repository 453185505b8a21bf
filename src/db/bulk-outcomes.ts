/**
 * Turns the result of one unordered bulk insert into one outcome per item, so a WriteBatcher can
 * tell each caller whether its own document was written.
 */
import { MongoBulkWriteError, MongoServerError, type WriteError } from 'mongodb';

function itemError(writeError: WriteError): MongoServerError {
  return new MongoServerError({ message: writeError.errmsg ?? 'write failed', errmsg: writeError.errmsg, code: writeError.code });
}

/**
 * `error` is what an unordered insertMany threw (undefined when it succeeded). A bulk-write
 * error maps to per-item errors (every other item was written); any other error (network,
 * auth, a closed client) failed the whole batch and is rethrown.
 */
export function bulkInsertOutcomes(count: number, error: unknown): (Error | null)[] {
  const outcomes: (Error | null)[] = new Array<Error | null>(count).fill(null);
  if (error === undefined) return outcomes;
  if (!(error instanceof MongoBulkWriteError)) throw error;
  const writeErrors = ([] as WriteError[]).concat(error.writeErrors);
  if (writeErrors.length === 0) throw error; // e.g. a write-concern failure: nothing is known per item
  for (const writeError of writeErrors) {
    if (writeError.index >= 0 && writeError.index < count) outcomes[writeError.index] = itemError(writeError);
  }
  return outcomes;
}
