/**
 * Task retries the way Celery's `self.retry()` does them: the task asks for a retry, the worker
 * sends a new message with the same id, `retries + 1` and an eta, stores RETRY and acknowledges
 * the current message. Past `max_retries` the retry becomes a failure instead: the caller's
 * exception when one was given, else MaxRetriesExceededError.
 */
import type { JsonObject, JsonValue } from '../../queue/protocol/json.js';
import { pythonRepr } from '../../queue/protocol/python-repr.js';
import { PythonException } from '../../queue/results/exceptions.js';

/** Celery's defaults for a task that sets neither (`Task.max_retries`, `Task.default_retry_delay`). */
export const DEFAULT_MAX_RETRIES = 3;
export const DEFAULT_RETRY_DELAY_SECONDS = 180;

export interface RetryOptions {
  /** Seconds from now; defaults to the task's `defaultRetryDelaySeconds` when `eta` is not given either. */
  countdown?: number;
  /** When to run again; wins over `countdown`. */
  eta?: Date;
  /** The reason: stored with the RETRY state, and what fails the task once retries run out. */
  exc?: unknown;
  /** Overrides the task's limit for this attempt (null or absent = the task's own). */
  maxRetries?: number | null;
  /** Arguments for the next attempt (default: the same as this one). */
  args?: JsonValue[];
  kwargs?: JsonObject;
}

export interface RetryPolicy {
  /** null = retry without limit. */
  maxRetries: number | null;
  defaultRetryDelaySeconds: number;
}

export interface RetryingRequest {
  taskId: string;
  taskName: string;
  retries: number;
  args: JsonValue[];
  kwargs: JsonObject;
}

/**
 * Thrown by `ctx.retry()` to tell the worker the task is to run again; tasks let it propagate
 * (catching it turns the retry into whatever the task does next, as in Celery).
 */
export class Retry extends Error {
  constructor(
    readonly when: Date,
    readonly exc: unknown,
    readonly nextArgs: JsonValue[],
    readonly nextKwargs: JsonObject,
  ) {
    super(`Retry in ${Math.max(0, Math.round((when.getTime() - Date.now()) / 1000))}s${exc instanceof Error ? `: ${exc.message}` : ''}`);
    this.name = 'Retry';
  }
}

export class MaxRetriesExceededError extends PythonException {
  constructor(message: string) {
    super('MaxRetriesExceededError', [message], 'celery.exceptions');
  }
}

/** What `ctx.retry()` does: always throws, a Retry or the failure that ends the retries. */
export function requestRetry(request: RetryingRequest, policy: RetryPolicy, options: RetryOptions = {}, now = new Date()): never {
  const retries = request.retries + 1;
  const maxRetries = options.maxRetries ?? policy.maxRetries;
  const args = options.args ?? request.args;
  const kwargs = options.kwargs ?? request.kwargs;
  if (maxRetries !== null && retries > maxRetries) {
    if (options.exc !== undefined && options.exc !== null) throw options.exc;
    throw new MaxRetriesExceededError(
      `Can't retry ${request.taskName}[${request.taskId}] args:${pythonTuple(args)} kwargs:${pythonRepr(kwargs)}`,
    );
  }
  const countdown = options.countdown ?? policy.defaultRetryDelaySeconds;
  const when = options.eta ?? new Date(now.getTime() + Math.max(0, countdown) * 1000);
  throw new Retry(when, options.exc ?? null, args, kwargs);
}

/** Python prints a signature's args as a tuple: `(1, 2)`, `(1,)`, `()`. */
function pythonTuple(items: JsonValue[]): string {
  const inner = items.map((item) => pythonRepr(item)).join(', ');
  return items.length === 1 ? `(${inner},)` : `(${inner})`;
}
