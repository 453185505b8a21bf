/**
 * Turns the result of one bulk write (insertMany / bulkWrite) into one outcome per item, so a
 * WriteBatcher can tell each caller whether its own document was written.
 */
import { MongoBulkWriteError, MongoServerError, type WriteError } from 'mongodb';

/** An item that was not attempted because an earlier write of the same ordered batch failed. */
export class NotAttempted extends Error {
  constructor() {
    super('not written: an earlier write of the same ordered batch failed');
    this.name = 'NotAttempted';
  }
}

function itemError(writeError: WriteError): MongoServerError {
  return new MongoServerError({ message: writeError.errmsg ?? 'write failed', errmsg: writeError.errmsg, code: writeError.code });
}

/**
 * `error` is what the bulk call threw (undefined when it succeeded). A bulk-write error maps to
 * per-item errors; any other error (network, auth, a closed client) failed the whole batch and
 * is rethrown. In an ordered batch the items after the first failure were never attempted.
 */
export function bulkOutcomes(count: number, error: unknown, ordered: boolean): (Error | null)[] {
  const outcomes: (Error | null)[] = new Array<Error | null>(count).fill(null);
  if (error === undefined) return outcomes;
  if (!(error instanceof MongoBulkWriteError)) throw error;
  const writeErrors = ([] as WriteError[]).concat(error.writeErrors);
  if (writeErrors.length === 0) throw error; // e.g. a write-concern failure: nothing is known per item
  for (const writeError of writeErrors) {
    if (writeError.index >= 0 && writeError.index < count) outcomes[writeError.index] = itemError(writeError);
  }
  if (ordered) {
    const first = Math.min(...writeErrors.map((w) => w.index));
    for (let i = first + 1; i < count; i++) outcomes[i] ??= new NotAttempted();
  }
  return outcomes;
}
