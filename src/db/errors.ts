/**
 * What went wrong in the database, in the database layer's own terms: driver errors are sorted
 * into a few kinds (unreachable, too slow, out of space, duplicate key, a query the engine
 * refuses) with a message fit for a caller and no server internals. The HTTP error handler is
 * the one place that turns a kind into a status code.
 */
import {
  MongoDriverError,
  MongoNetworkError,
  MongoServerError,
  MongoServerSelectionError,
  MongoNotConnectedError,
  MongoTopologyClosedError,
  MongoBulkWriteError,
} from 'mongodb';
import { isStorageFull } from './storage-state.js';

export type DatabaseErrorKind =
  /** The database (or the storage under it) cannot answer now; the same request may work later. */
  | 'unavailable'
  /** The operation used up its time limit. */
  | 'query_timeout'
  /** The disk is full: nothing can be written until space is freed. */
  | 'storage_full'
  /** A record with the same _id exists. */
  | 'duplicate_key'
  /** The query itself is wrong (an unknown operator, a bad projection, ...). */
  | 'invalid_query'
  /** The engine refused a record it was given (too large, a key it will not store, ...). */
  | 'record_refused';

export class DatabaseError extends Error {
  override readonly name = 'DatabaseError';

  constructor(
    readonly kind: DatabaseErrorKind,
    message: string,
    /** Facts for the caller, such as which records of a batch were written. */
    readonly detail?: unknown,
    /** The error code callers see; the kind's own name unless a more exact one applies. */
    readonly code: string = kind === 'unavailable' ? 'database_unavailable' : kind === 'storage_full' ? STORAGE_FULL_CODE : kind,
  ) {
    super(message);
  }

  /** Worth trying the same write again later (the record itself was not the problem). */
  get transient(): boolean {
    return this.kind === 'unavailable' || this.kind === 'query_timeout' || this.kind === 'storage_full' || this.kind === 'duplicate_key';
  }
}

export const databaseUnavailable = (message = 'The database is unavailable. Try again shortly.', detail?: unknown): DatabaseError =>
  new DatabaseError('unavailable', message, detail);

/** Server error codes that mean "your query is wrong", not "the server is broken". */
const USER_QUERY_ERROR_CODES = new Set([
  2, // BadValue
  9, // FailedToParse
  14, // TypeMismatch
  15, // Overflow
  17, // ProtocolError
  28, // PathNotViable
  31254, // projection mix
  40323,
  40324,
  40352,
  15955,
  15998,
  16410,
  16436,
  17276,
  28769,
  31249,
  31250,
  51091,
  51108,
  4822819,
  40353,
  40415,
  40414,
  31253,
  238, // NotImplemented (an operator this engine does not support)
  115, // CommandNotSupported
  27, // IndexNotFound: a $text search on a collection without a text index
  40, // ConflictingUpdateOperators: two update operators on one path
  52, // DollarPrefixedFieldName
  56, // EmptyFieldName
  57, // DottedFieldName
  241, // ConversionFailure: $toInt, $toDate, $dateFromString, ... of a value that does not convert
]);

/**
 * The local engine (FerretDB) answers an operator it does not implement in that place (`$text`
 * under a field, for one) as an InternalError, the code it also gives when PostgreSQL is down:
 * told apart by its words, it is the query's fault, and retrying it cannot help.
 */
const isNotImplemented = (err: MongoServerError): boolean => err.code === 1 && /\bnot (yet )?implemented\b/i.test(serverMessage(err));

/**
 * Codes that say the server, or the storage under it, cannot answer now — not that the query is
 * wrong: 503, so clients retry. FerretDB answers InternalError (1) when PostgreSQL is down or
 * restarting, and AuthenticationFailed (18) for the service's own login while its engine restarts
 * (end users never log in to the database, so an 18 is never the caller's fault).
 */
const UNAVAILABLE_CODES = new Set([
  1, // InternalError
  6, // HostUnreachable
  7, // HostNotFound
  18, // AuthenticationFailed
  89, // NetworkTimeout
  91, // ShutdownInProgress
  189, // PrimarySteppedDown
  9001, // SocketException
  10107, // NotWritablePrimary
  11600, // InterruptedAtShutdown
  11602, // InterruptedDueToReplStateChange
  13435, // NotPrimaryNoSecondaryOk
  13436, // NotPrimaryOrSecondary
  11601, // Interrupted
  12586, // BackgroundOperationInProgressForDatabase
  12587, // BackgroundOperationInProgressForNamespace
  13388, // StaleConfig
  46841, // ClientMarkedKilled
]);

/**
 * Codes from here up (the named ones above aside) are MongoDB's assertion locations: each names
 * the one place in the engine's parser that refused what it was given (40272 "$addFields
 * specification stage must be an object", 15957 "the limit must be specified as a number",
 * 40600 "$geoNear is not allowed to be used within a $facet stage", ...). FerretDB/DocumentDB
 * answer with the same codes. There are thousands, one per check, so they are told by range:
 * a user's pipeline or filter that an engine check refuses is the caller's to fix.
 */
const FIRST_ASSERTION_LOCATION_CODE = 10_000;

/**
 * The server's own words, minus what only its developers need: FerretDB may prefix messages with
 * Go source locations ("[msg_insert.go:168 handler.(*Handler).MsgInsert] ..." or
 * "msg_find.go:43 (handler.(*Handler).msgFind): pool.go:90 (...): ..."). Long messages
 * are cut so an error body stays small.
 */
export function serverMessage(err: MongoServerError): string {
  const raw = err.errmsg ?? err.message;
  const cleaned = raw
    .replace(/\[[^\]]*\.go:\d+[^\]]*\]\s*/g, '')
    .replace(/(?:[\w./-]+\.go:\d+ \(.*?\):\s+)+/g, '')
    .replace(/\s+/g, ' ')
    .trim();
  const text = cleaned === '' ? `error code ${String(err.code)}` : cleaned;
  return text.length > 300 ? `${text.slice(0, 297)}...` : text;
}

/**
 * A read that used up the query time limit: the same query may well succeed when the engine is
 * less busy. Also raised when the service itself stops waiting for an engine that does not end
 * the work in time.
 */
export const queryTimeout = (): DatabaseError =>
  new DatabaseError('query_timeout', 'The query took longer than the server-side time limit.');

export const STORAGE_FULL_CODE = 'database_storage_full';

/** A write refused because the database's disk is full: not the caller's fault, and worth retrying later. */
export function storageFull(detail?: unknown): DatabaseError {
  return new DatabaseError(
    'storage_full',
    'The database has no storage space left; nothing more can be written until an administrator frees some.',
    detail,
  );
}

/** The most BSON one record may hold, on MongoDB and on the local engine alike. */
const MAX_RECORD_BSON_BYTES = 16 * 1024 * 1024;

/**
 * A record past the 16 MiB of BSON a record may hold, in the words of whichever side refused it:
 * MongoDB's "object to insert too large" (an insert), BSONObjectTooLarge (10334) and 17419 (a
 * replacement or an update that grows a record past it), FerretDB's "Size N is larger than
 * MaxDocumentSize", and the driver's own check of a batch ("Document is larger than the maximum
 * size"). The record is the caller's to change, so it is told apart from a query the engine refuses.
 */
function isRecordTooLarge(err: unknown): boolean {
  if (err instanceof MongoServerError && (err.code === 10334 || err.code === 17419)) return true;
  return (
    (err instanceof MongoServerError || err instanceof MongoDriverError) &&
    /object to insert too large|is larger than (the )?(maximum size|MaxDocumentSize)/i.test(err.message)
  );
}

const recordTooLarge = (): DatabaseError =>
  new DatabaseError(
    'record_refused',
    `The record is larger than the ${MAX_RECORD_BSON_BYTES} bytes (16 MiB) of BSON a record may hold; split it into several records.`,
    { max_bson_bytes: MAX_RECORD_BSON_BYTES },
    'record_too_large',
  );

/**
 * Node's own error for a write to a socket the other side has closed. The driver passes it on
 * unwrapped when the engine goes away in the middle of a command being written (seen while the
 * engine is killed under load); it says the database is gone, not that the request was bad.
 */
function isSocketEnded(err: unknown): boolean {
  return (
    err instanceof Error &&
    ((err as NodeJS.ErrnoException).code === 'EPIPE' || /socket has been ended by the other party/i.test(err.message))
  );
}

/**
 * The driver's error for an operation that waited longer than the wait-queue limit for a pooled
 * connection: every connection is held by an operation the engine has not answered, and new
 * ones are not completing (an engine that stopped answering, or one overloaded). The driver
 * does not export its class, hence the name.
 */
function isConnectionWaitTimeout(err: unknown): boolean {
  return err instanceof MongoDriverError && err.name === 'MongoWaitQueueTimeoutError';
}

export function classifyDatabaseError(err: unknown): DatabaseError | undefined {
  if (err instanceof DatabaseError) return err;
  if (isStorageFull(err)) return storageFull();
  if (err instanceof MongoBulkWriteError && err.code === 11000) {
    return new DatabaseError('duplicate_key', 'A record with this _id already exists.', {
      inserted_ids: Object.values(err.insertedIds ?? {}).map(String),
    });
  }
  if (isRecordTooLarge(err)) return recordTooLarge();
  if (err instanceof MongoServerError) {
    if (err.code === 11000) return new DatabaseError('duplicate_key', 'A record with this _id already exists.');
    if (err.code === 50) return queryTimeout(); // MaxTimeMSExpired
    if (isNotImplemented(err)) return new DatabaseError('invalid_query', `The database refused the query: ${serverMessage(err)}`);
    if (typeof err.code === 'number' && UNAVAILABLE_CODES.has(err.code)) return databaseUnavailable();
    if (typeof err.code === 'number' && (USER_QUERY_ERROR_CODES.has(err.code) || err.code >= FIRST_ASSERTION_LOCATION_CODE)) {
      return new DatabaseError('invalid_query', `The database refused the query: ${serverMessage(err)}`);
    }
    // Any other code is not known to be the caller's fault: left to the handler's logged 500, so
    // a server-side failure is seen and fixed rather than blamed on the request.
  }
  if (isSocketEnded(err)) return databaseUnavailable();
  if (isConnectionWaitTimeout(err)) {
    return databaseUnavailable('The database is not answering: no connection to it came free in time. Try again shortly.');
  }
  if (
    err instanceof MongoNetworkError ||
    err instanceof MongoServerSelectionError ||
    err instanceof MongoNotConnectedError ||
    err instanceof MongoTopologyClosedError
  ) {
    return databaseUnavailable();
  }
  return undefined;
}
