/** Retrying an operation against a service that may be restarting (the database, mostly). */
import { setMaxListeners } from 'node:events';
import { Backoff } from '../lib/backoff.js';

export interface RetryOptions {
  /** Give up after this long (ms) and rethrow the last error. */
  deadlineMs: number;
  initialDelayMs?: number;
  maxDelayMs?: number;
  /** Stops retrying early (e.g. shutdown); an attempt still under way is abandoned too (see abortable). */
  signal?: AbortSignal;
  /** Errors for which this answers false are rethrown at once: retrying cannot help them. */
  retryIf?: (error: unknown) => boolean;
  onRetry?: (error: unknown, attempt: number, delayMs: number) => void;
}

/** Thrown when a signal ends an operation before it settled. */
export class OperationAborted extends Error {
  constructor() {
    super('operation aborted');
    this.name = 'OperationAborted';
  }
}

export async function retrying<T>(operation: () => Promise<T>, options: RetryOptions): Promise<T> {
  const deadline = Date.now() + options.deadlineMs;
  const backoff = new Backoff({ initialMs: options.initialDelayMs ?? 200, maxMs: options.maxDelayMs ?? 5_000 });
  for (let attempt = 1; ; attempt++) {
    try {
      return await operation();
    } catch (error) {
      if (options.retryIf !== undefined && !options.retryIf(error)) throw error;
      const remaining = deadline - Date.now();
      if (remaining <= 0 || options.signal?.aborted) throw error;
      const wait = Math.min(backoff.next(), remaining);
      options.onRetry?.(error, attempt, wait);
      await sleep(wait, options.signal);
      if (options.signal?.aborted) throw error;
    }
  }
}

/**
 * Stops waiting for `operation` when `signal` fires (rejecting with OperationAborted). The
 * operation itself carries on unobserved: a database call cannot be cancelled, but whoever waits
 * for it (a shutdown, say) need not wait for the driver's own timeouts.
 */
export function abortable<T>(operation: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return operation;
  operation.catch(() => undefined);
  if (signal.aborted) return Promise.reject(new OperationAborted());
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(new OperationAborted());
    signal.addEventListener('abort', onAbort, { once: true });
    operation.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/**
 * An AbortController whose signal every operation of a worker under way may wait on (through
 * `abortable` or `sleep`). Each waiter adds a listener and removes it when it settles, so the
 * number of listeners follows the tasks in flight; Node's warning past ten listeners, meant for
 * listeners that are never removed, would fire at any concurrency above a handful.
 */
export function sharedAbortController(): AbortController {
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  return controller;
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
  });
}
