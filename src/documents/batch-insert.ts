/**
 * Inserting an array of records, all or nothing reported truthfully: when the insert fails
 * part-way, the answer names exactly the records that were written.
 *
 * The insert is ordered, so what was written is always a prefix of the array. Two kinds of failure
 * need different evidence:
 * - The server refused one record (a duplicate `_id`, a value it cannot store): it says which,
 *   and everything before it was written.
 * - The whole command failed (the connection dropped, the database restarted, the server refused
 *   the batch as a whole): the server may have written none, some or all of the records whose
 *   command was in flight, and the driver cannot know. It reports every id of the batch as
 *   inserted in this case, which is how a failed batch used to be answered with ids of records
 *   that were never stored. Here the database is asked instead which of those ids exist; if it
 *   cannot be asked, the ids are reported as unconfirmed rather than guessed.
 */
import { MongoBulkWriteError, type Collection, type Document } from 'mongodb';
import { classifyDatabaseError, databaseUnavailable, DatabaseError, serverMessage, storageFull } from '../db/errors.js';
import { isStorageFull } from '../db/storage-state.js';
import { signalOption } from '../db/deadline.js';
import type { Deadline } from '../lib/deadline.js';

/**
 * How long to keep asking a database that is coming back which records it holds: long enough
 * for a dropped connection to be replaced, short enough for the answer to still be useful.
 */
const CONFIRM_BUDGET_MS = 6_000;
const CONFIRM_RETRY_DELAY_MS = 500;

export interface BatchFailureDetail {
  /** Records written, in order: always a prefix of the array. */
  inserted_ids: unknown[];
  inserted_count: number;
  /** Index in the array of the first record not written. */
  failed_index: number;
  /** Records that may or may not have been written: present only when the database could not be asked. */
  unconfirmed_ids?: unknown[];
}

/**
 * Inserts `docs` in order within `deadline`; resolves with their ids, or throws a DatabaseError
 * whose detail is a BatchFailureDetail. An insert still unanswered at the deadline is a whole
 * command that failed: the answer then says what the database holds of it.
 */
export async function insertBatch(collection: Collection, docs: Document[], deadline: Deadline): Promise<unknown[]> {
  try {
    const result = await deadline((signal) => collection.insertMany(docs, { ordered: true, ...signalOption(signal) }));
    return Object.values(result.insertedIds);
  } catch (err) {
    // The driver assigns missing `_id`s to the documents before sending them.
    const ids = docs.map((doc) => doc._id as unknown);
    throw await batchFailure(collection, ids, err);
  }
}

function firstWriteError(err: MongoBulkWriteError): { index: number } | undefined {
  const errors = err.writeErrors;
  if (Array.isArray(errors)) return errors[0];
  return errors as { index: number } | undefined;
}

async function batchFailure(collection: Collection, ids: unknown[], err: unknown): Promise<DatabaseError> {
  if (err instanceof MongoBulkWriteError) {
    const refused = firstWriteError(err);
    if (refused !== undefined) return recordRefused(err, ids, refused.index);
  }
  // Wire batches the driver saw acknowledged before the failure were written in full.
  const acknowledged = err instanceof MongoBulkWriteError ? err.insertedCount : 0;
  const cause = commandFailure(err);
  const inFlight = ids.slice(acknowledged);
  const present = await idsPresent(collection, inFlight);
  if (present === null) {
    const detail: BatchFailureDetail = {
      inserted_ids: ids.slice(0, acknowledged),
      inserted_count: acknowledged,
      failed_index: acknowledged,
      unconfirmed_ids: inFlight,
    };
    return databaseUnavailable(
      `The database failed while writing the records and could not be asked afterwards which were written: ${acknowledged} were, ` +
        `${inFlight.length} are unconfirmed (see "unconfirmed_ids"). Try again shortly.`,
      detail,
    );
  }
  let written = acknowledged;
  while (written < ids.length && present.has(idKey(ids[written]))) written += 1;
  const detail: BatchFailureDetail = { inserted_ids: ids.slice(0, written), inserted_count: written, failed_index: written };
  return new DatabaseError(cause.kind, `${cause.message} ${written} of ${ids.length} records were written.`, detail, cause.code);
}

function recordRefused(err: MongoBulkWriteError, ids: unknown[], index: number): DatabaseError {
  const detail: BatchFailureDetail = { inserted_ids: ids.slice(0, index), inserted_count: index, failed_index: index };
  if (isStorageFull(err)) return storageFull(detail);
  if (err.code === 11000)
    return new DatabaseError('duplicate_key', 'A record with this _id already exists; records before it were written.', detail);
  return new DatabaseError('record_refused', `The database refused record ${index}: ${serverMessage(err)}`, detail, 'insert_failed');
}

/** The error the whole failed command stands for (the driver wraps it in a bulk-write error without write errors). */
function commandFailure(err: unknown): DatabaseError {
  if (err instanceof MongoBulkWriteError && typeof err.code !== 'number') {
    return databaseUnavailable('The connection to the database was lost while writing the records.');
  }
  return classifyDatabaseError(err) ?? databaseUnavailable('The database failed while writing the records.');
}

/** The ids among `ids` that the collection holds, or null when the database cannot be asked. */
async function idsPresent(collection: Collection, ids: unknown[]): Promise<Set<string> | null> {
  if (ids.length === 0) return new Set();
  const deadline = Date.now() + CONFIRM_BUDGET_MS;
  for (;;) {
    const remaining = deadline - Date.now();
    try {
      const filter: Document = { _id: { $in: ids } };
      const rows = await collection
        .find(filter, { projection: { _id: 1 }, signal: AbortSignal.timeout(Math.max(remaining, 250)) })
        .toArray();
      return new Set(rows.map((row) => idKey(row._id)));
    } catch {
      if (deadline - Date.now() < CONFIRM_RETRY_DELAY_MS) return null;
      await new Promise((resolve) => setTimeout(resolve, CONFIRM_RETRY_DELAY_MS));
    }
  }
}

/** Ids compared by type and value (`"1"` and `1` are different records). */
function idKey(id: unknown): string {
  return `${typeof id}:${id instanceof Object ? JSON.stringify(id) : String(id)}`;
}
