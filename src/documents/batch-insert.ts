/**
 * Inserting an array of records, all or nothing reported truthfully: when the insert fails
 * part-way, the answer names exactly the records that were written.
 *
 * A large array is sent as several insert commands of about INSERT_COMMAND_BYTES each, one after
 * another, instead of one command for the whole array. The driver builds each command's BSON
 * whole before sending it (the records' bytes, then three concatenated copies of them as the
 * message, then the TLS layer's encrypted copy, whose buffer the connection keeps for its life):
 * a 10 MB array cost about 50 MB of buffers at once, and left a 10 MB buffer behind in every
 * pooled connection that carried one. Commands of about 1 MB bound all of that by their size;
 * the round trip each costs is small beside the engine's work on a megabyte of records.
 *
 * Each command's records are built as it is sent (int64Numbers: the Longs of the body's int64s),
 * and dropped once it is answered: a body's hundreds of thousands of int64s are never all Longs
 * at once, and those of one command die young (int64-numbers.ts says why that matters). For
 * that a command is also cut at INSERT_COMMAND_INT64S int64s: a megabyte of records made mostly
 * of int64s would otherwise hold some 80,000 Longs at once.
 *
 * The insert is ordered, commands included (the next is sent only once the previous one was
 * acknowledged), so what was written is always a prefix of the array. Two kinds of failure
 * need different evidence:
 * - The server refused one record (a duplicate `_id`, a value it cannot store): it says which,
 *   and everything before it was written (the earlier commands' records too).
 * - The whole command failed (the connection dropped, the database restarted, the server refused
 *   the batch as a whole): the server may have written none, some or all of the records whose
 *   command was in flight, and the driver cannot know. It reports every id of the batch as
 *   inserted in this case, which is how a failed batch used to be answered with ids of records
 *   that were never stored. Here the database is asked instead which of those ids exist; if it
 *   cannot be asked, the ids are reported as unconfirmed rather than guessed. The earlier
 *   commands' records were acknowledged, and the later commands were never sent.
 */
import { MongoBulkWriteError, type Collection, type Document } from 'mongodb';
import { classifyDatabaseError, databaseUnavailable, DatabaseError, serverMessage, storageFull } from '../db/errors.js';
import { isStorageFull } from '../db/storage-state.js';
import { signalOption } from '../db/deadline.js';
import type { Deadline } from '../lib/deadline.js';
import { idKey } from './id-key.js';
import { Int64Conversion, isInt64Free } from './int64-numbers.js';

/**
 * How long to keep asking a database that is coming back which records it holds: long enough
 * for a dropped connection to be replaced, short enough for the answer to still be useful.
 */
const CONFIRM_BUDGET_MS = 6_000;
const CONFIRM_RETRY_DELAY_MS = 500;

/**
 * The size of one insert command, in bytes of the records' JSON text (their BSON is of about the
 * same size): large enough that a command's round trip is small beside the engine's work on it,
 * small enough that the buffers of a command are a few MB.
 */
export const INSERT_COMMAND_BYTES = 1024 * 1024;

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
 * How many of `count` records each insert command carries, when their text is `textBytes` long:
 * the array split into equal commands of at most about INSERT_COMMAND_BYTES (by the average
 * record: measuring each record's BSON beforehand would be a second pass over every record).
 * Records of unknown size go in one command, which the driver splits only at the server's limits.
 */
export function recordsPerCommand(count: number, textBytes: number | undefined): number {
  if (textBytes === undefined || textBytes <= INSERT_COMMAND_BYTES) return Math.max(count, 1);
  return Math.ceil(count / Math.ceil(textBytes / INSERT_COMMAND_BYTES));
}

/**
 * The most integers beyond int32 (Longs) one insert command carries, whatever its bytes: the
 * Longs of a command are alive together until the driver has serialized it, and a megabyte of
 * int64s (about 80,000 Longs, some 4 MB with their records' copies) fills most of the API's
 * young generation (--max-semi-space-size, src/config/api-memory.ts), whose scavenges then copy
 * and promote them. Commands of records mostly of int64s are therefore cut by this count before
 * their bytes reach INSERT_COMMAND_BYTES.
 */
export const INSERT_COMMAND_INT64S = 16_384;

/**
 * The records of one insert command: from `docs[from]` on, at most `count` of them, as the
 * driver stores them (int64Numbers), fewer once they hold INSERT_COMMAND_INT64S int64s (always
 * at least one record). A record with an int64 is a copy, which the driver gives its `_id` when
 * it has none: the ids are read from these records, never from `docs`.
 */
export function commandRecords(docs: readonly Document[], from: number, count: number): Document[] {
  const end = Math.min(from + count, docs.length);
  if (isInt64Free(docs)) return docs.slice(from, end);
  const records: Document[] = [];
  const conversion = new Int64Conversion();
  for (let i = from; i < end && conversion.made < INSERT_COMMAND_INT64S; i += 1) records.push(conversion.of(docs[i] as Document));
  return records;
}

/**
 * Inserts `docs` (records as a body holds them: int64s as numbers, see int64-numbers.ts) in order
 * within `deadline` (one deadline for the whole array, whatever the number of commands);
 * resolves with their ids, or throws a DatabaseError whose detail is a BatchFailureDetail. `textBytes`, the length of the records' JSON text when known, sizes the
 * commands (recordsPerCommand). An insert still unanswered at the deadline is a whole command
 * that failed: the answer then says what the database holds of it.
 */
export async function insertBatch(collection: Collection, docs: Document[], deadline: Deadline, textBytes?: number): Promise<unknown[]> {
  const perCommand = recordsPerCommand(docs.length, textBytes);
  /** The ids of the records of every command acknowledged so far. */
  const written: unknown[] = [];
  /** The records of the command being sent; updated with `written` in one step, so the two always agree. */
  let sending: Document[] = [];
  try {
    await deadline(async (signal) => {
      for (let from = 0; from < docs.length; from = written.length) {
        // Past the deadline no further command goes out (the failure below asks only about `sending`).
        signal.throwIfAborted();
        sending = commandRecords(docs, from, perCommand);
        const result = await collection.insertMany(sending, { ordered: true, ...signalOption(signal) });
        for (let i = 0; i < sending.length; i++) written.push(result.insertedIds[i]);
        sending = [];
      }
    });
    return written;
  } catch (err) {
    // The driver assigns missing `_id`s to the documents before sending them.
    throw await batchFailure(
      collection,
      [...written],
      sending.map((doc) => doc._id as unknown),
      docs.length,
      err,
    );
  }
}

function firstWriteError(err: MongoBulkWriteError): { index: number } | undefined {
  const errors = err.writeErrors;
  if (Array.isArray(errors)) return errors[0];
  return errors as { index: number } | undefined;
}

/**
 * The failure of the command carrying the records `sending` (ids), after the commands whose
 * records `written` were acknowledged, in an array of `total` records.
 */
async function batchFailure(
  collection: Collection,
  written: unknown[],
  sending: unknown[],
  total: number,
  err: unknown,
): Promise<DatabaseError> {
  if (err instanceof MongoBulkWriteError) {
    // Its index counts from the start of its own command.
    const refused = firstWriteError(err);
    if (refused !== undefined) return recordRefused(err, [...written, ...sending.slice(0, refused.index)]);
  }
  // Wire batches the driver saw acknowledged before the failure were written in full.
  const acknowledged = err instanceof MongoBulkWriteError ? err.insertedCount : 0;
  const cause = commandFailure(err);
  const confirmed = [...written, ...sending.slice(0, acknowledged)];
  const inFlight = sending.slice(acknowledged);
  const present = await idsPresent(collection, inFlight);
  if (present === null) {
    const detail: BatchFailureDetail = {
      inserted_ids: confirmed,
      inserted_count: confirmed.length,
      failed_index: confirmed.length,
      unconfirmed_ids: inFlight,
    };
    return databaseUnavailable(
      `The database failed while writing the records and could not be asked afterwards which were written: ${confirmed.length} were, ` +
        `${inFlight.length} are unconfirmed (see "unconfirmed_ids"). Try again shortly.`,
      detail,
    );
  }
  let found = 0;
  while (found < inFlight.length && present.has(idKey(inFlight[found]))) found += 1;
  const insertedIds = [...confirmed, ...inFlight.slice(0, found)];
  const detail: BatchFailureDetail = { inserted_ids: insertedIds, inserted_count: insertedIds.length, failed_index: insertedIds.length };
  return new DatabaseError(cause.kind, `${cause.message} ${insertedIds.length} of ${total} records were written.`, detail, cause.code);
}

/** A record refused after the records `insertedIds` were written. */
function recordRefused(err: MongoBulkWriteError, insertedIds: unknown[]): DatabaseError {
  const index = insertedIds.length;
  const detail: BatchFailureDetail = { inserted_ids: insertedIds, inserted_count: index, failed_index: index };
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
