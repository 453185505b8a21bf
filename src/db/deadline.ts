/**
 * The deadline of each database operation on a request's path that no query time budget limits
 * (MONGO_OPERATION_TIMEOUT_MS): writes, single-record reads, account and token look-ups, listings
 * of databases and collections. Passed to the driver as the operation's abort signal, so an
 * operation still waiting at the deadline is abandoned on this side (its connection closed, since
 * the driver cannot know what the engine will still send on it) rather than left to hold a
 * request — and a pooled connection — for as long as an engine that stopped answering stays silent.
 */
import { deadline, type Deadline } from '../lib/deadline.js';
import { databaseUnavailable, type DatabaseError } from './errors.js';

export function databaseNotAnswering(ms: number): DatabaseError {
  return databaseUnavailable(`The database did not answer within ${Math.ceil(ms / 1000)} s. Try again shortly.`);
}

export function operationDeadline(ms: number): Deadline {
  return deadline(ms, () => databaseNotAnswering(ms));
}

/**
 * Driver options that carry an abort signal. The driver honours `signal` on every operation (each
 * operation keeps its options, and server selection, connection checkout and the round trip all
 * watch the signal), but its typings name it only on a few (find, aggregate, countDocuments,
 * listCollections, command): for the others it goes through this one cast.
 */
export function signalOption<T extends object>(signal: AbortSignal): T {
  return { signal } as T;
}
