/**
 * Why the task queue could not do something, for the API and the worker alike: the broker is not
 * reachable, did not confirm a message in time, or a queue is missing. The API answers these
 * with 503 (src/app/error-handler.ts, the one place that maps errors to HTTP); the worker waits
 * and retries.
 */
export type QueueUnavailableCode = 'broker_unavailable' | 'broker_timeout' | 'queue_unavailable';

export class QueueUnavailableError extends Error {
  override readonly name = 'QueueUnavailableError';

  constructor(
    readonly code: QueueUnavailableCode,
    message: string,
    /** Facts for the caller, such as the id of a task that may still run. */
    readonly detail?: Record<string, unknown>,
  ) {
    super(message);
  }
}
