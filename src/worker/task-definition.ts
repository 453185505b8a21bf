/**
 * How tasks are written for the TypeScript worker:
 *
 *   export const add = defineTask({
 *     name: 'tasks.add',
 *     doc: 'Add two numbers.',
 *     run: (ctx, x: number, y: number) => x + y,
 *   });
 *
 * Positional arguments (the message's `args`) are spread after the context; keyword arguments
 * (the message's `kwargs`) are in `ctx.kwargs`. One rule for every task, and a task's signature
 * reads like its Python counterpart's positional parameters. The return value must be
 * JSON-serialisable; throwing stores a FAILURE. `run` may be sync or async.
 */
import type { Logger } from 'pino';
import type { JsonObject, JsonValue } from '../queue/protocol/json.js';
import type { HeaderValue } from '../queue/protocol/task-message.js';
import type { DataStore } from './data-store.js';

export interface TaskContext {
  taskId: string;
  taskName: string;
  /** The API user who submitted the task (`authenticated_user` header), null when unknown. */
  authenticatedUser: string | null;
  args: JsonValue[];
  kwargs: JsonObject;
  /** Non-protocol headers of the message. */
  headers: Record<string, HeaderValue>;
  retries: number;
  /** This worker's node name. */
  hostname: string;
  /**
   * Fires when the task is revoked with terminate, hits its soft or hard time limit, or the
   * worker shuts down past its grace period. `signal.reason` is the cause. Long tasks must
   * honour it: JavaScript cannot kill a running function.
   */
  signal: AbortSignal;
  dataStore: DataStore;
  logger: Logger;
}

// `any`: a task declares its own parameter types; the worker passes whatever JSON the caller sent.
export type TaskRunFunction = (ctx: TaskContext, ...args: any[]) => unknown;

export interface TaskOptions<F extends TaskRunFunction> {
  /** Registered name, e.g. `tasks.add`; must equal what clients send. */
  name: string;
  /** Shown by `registered` as `__doc__` (Python's docstring). */
  doc?: string;
  run: F;
  /** Hard limit: the task is recorded as FAILURE(TimeLimitExceeded) and abandoned. */
  timeLimitSeconds?: number;
  /** Soft limit: `ctx.signal` fires with SoftTimeLimitExceeded so the task can stop itself. */
  softTimeLimitSeconds?: number;
  /** Do not store SUCCESS results (failures are still stored), like Celery's ignore_result. */
  ignoreResult?: boolean;
}

/** Marks definitions; `Symbol.for` so a second copy of this module (e.g. in a task package) agrees. */
export const TASK_DEFINITION = Symbol.for('cybercom.worker.taskDefinition');

export interface TaskDefinition<F extends TaskRunFunction = TaskRunFunction> {
  readonly [TASK_DEFINITION]: true;
  readonly name: string;
  readonly doc: string | null;
  readonly run: F;
  readonly timeLimitSeconds: number | null;
  readonly softTimeLimitSeconds: number | null;
  readonly ignoreResult: boolean;
}

const TASK_NAME = /^[A-Za-z_][\w.:-]*$/;

export function defineTask<F extends TaskRunFunction>(options: TaskOptions<F>): TaskDefinition<F> {
  if (!TASK_NAME.test(options.name)) throw new TypeError(`Invalid task name ${JSON.stringify(options.name)}`);
  if (typeof options.run !== 'function') throw new TypeError(`Task ${options.name} has no run function`);
  for (const [key, value] of [['timeLimitSeconds', options.timeLimitSeconds], ['softTimeLimitSeconds', options.softTimeLimitSeconds]] as const) {
    if (value !== undefined && !(typeof value === 'number' && value > 0)) throw new TypeError(`Task ${options.name}: ${key} must be a positive number`);
  }
  return Object.freeze({
    [TASK_DEFINITION]: true as const,
    name: options.name,
    doc: options.doc ?? null,
    run: options.run,
    timeLimitSeconds: options.timeLimitSeconds ?? null,
    softTimeLimitSeconds: options.softTimeLimitSeconds ?? null,
    ignoreResult: options.ignoreResult ?? false,
  });
}

export function isTaskDefinition(value: unknown): value is TaskDefinition {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[TASK_DEFINITION] === true;
}
