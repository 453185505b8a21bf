/**
 * How tasks are written for the TypeScript worker:
 *
 *   export const add = defineTask({
 *     name: 'tasks.add',
 *     doc: 'Add two numbers.',
 *     parameters: [
 *       { name: 'x', annotation: 'number' },
 *       { name: 'y', annotation: 'number', default: 0 },
 *     ],
 *     run: (ctx, x: number, y: number = 0) => x + y,
 *   });
 *
 * Positional arguments (the message's `args`) are spread after the context; keyword arguments
 * (the message's `kwargs`) are in `ctx.kwargs`. One rule for every task, and a task's signature
 * reads like its Python counterpart's positional parameters. The return value must be
 * JSON-serialisable; throwing stores a FAILURE. `run` may be sync or async.
 *
 * `parameters` (optional) describe the call for the API's task list and its run form (the
 * `cybercom_task_info` remote-control reply): positional ones (the default kind) in the order
 * `run` takes them, `keyword_only` ones for what the task reads from `ctx.kwargs`, and at most one
 * `var_positional` / `var_keyword` for "any further" arguments. The worker does not check calls
 * against them; they are documentation, checked for consistency when the task is defined.
 *
 * Retries work like Celery's `self.retry()`: `ctx.retry({ countdown: 10, exc: error })` throws;
 * let it propagate and the task runs again later with the same id (up to `maxRetries`, then
 * it fails with `exc`, or MaxRetriesExceededError when no `exc` was given).
 */
import type { Logger } from 'pino';
import type { JsonObject, JsonValue } from '../queue/protocol/json.js';
import { signatureText, type ParameterKind, type TaskParameter } from '../queue/protocol/task-info.js';
import type { HeaderValue } from '../queue/protocol/task-message.js';
import type { DataStore } from './data-store.js';
import { DEFAULT_MAX_RETRIES, DEFAULT_RETRY_DELAY_SECONDS, type RetryOptions } from './request/task-retry.js';

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
  /** The first task of the workflow this one belongs to (its own id for a lone task). */
  rootId: string | null;
  /** The task whose completion sent this one (chains, callbacks), null for a lone task. */
  parentId: string | null;
  /** Asks for another run of this task later (see the module comment); never returns. */
  retry: (options?: RetryOptions) => never;
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

/** Python's kinds, less `positional_or_keyword`: a TypeScript task takes a value from `args` or from `ctx.kwargs`, never either. */
export type TaskParameterKind = Exclude<ParameterKind, 'positional_or_keyword'>;

export interface TaskParameterDeclaration {
  /** An identifier, unique within the task. */
  name: string;
  /** Default `positional_only`: the next value of the message's `args`. */
  kind?: TaskParameterKind;
  /** The value `run` uses when the caller leaves the parameter out (shown and pre-filled in the form). */
  default?: JsonValue;
  /** The expected type, as text (`number`, `string[]`). */
  annotation?: string;
}

export interface TaskOptions<F extends TaskRunFunction> {
  /** Registered name, e.g. `tasks.add`; must equal what clients send. */
  name: string;
  /** Shown by `registered` as `__doc__` (Python's docstring). */
  doc?: string;
  /** The task's parameters, for the task list (see the module comment); absent = not described. */
  parameters?: readonly TaskParameterDeclaration[];
  run: F;
  /** Hard limit: the task is recorded as FAILURE(TimeLimitExceeded) and abandoned. */
  timeLimitSeconds?: number;
  /** Soft limit: `ctx.signal` fires with SoftTimeLimitExceeded so the task can stop itself. */
  softTimeLimitSeconds?: number;
  /** Do not store SUCCESS results (failures are still stored), like Celery's ignore_result. */
  ignoreResult?: boolean;
  /** Retries `ctx.retry()` may ask for; null = without limit (default 3, as in Celery). */
  maxRetries?: number | null;
  /** Delay of `ctx.retry()` without countdown or eta (default 180 s, as in Celery). */
  defaultRetryDelaySeconds?: number;
}

/** Marks definitions; `Symbol.for` so a second copy of this module (e.g. in a task package) agrees. */
export const TASK_DEFINITION = Symbol.for('cybercom.worker.taskDefinition');

export interface TaskDefinition<F extends TaskRunFunction = TaskRunFunction> {
  readonly [TASK_DEFINITION]: true;
  readonly name: string;
  readonly doc: string | null;
  /** Null when the task does not describe its parameters. */
  readonly parameters: readonly TaskParameter[] | null;
  readonly run: F;
  readonly timeLimitSeconds: number | null;
  readonly softTimeLimitSeconds: number | null;
  readonly ignoreResult: boolean;
  readonly maxRetries: number | null;
  readonly defaultRetryDelaySeconds: number;
}

const TASK_NAME = /^[A-Za-z_][\w.:-]*$/;
const PARAMETER_NAME = /^[A-Za-z_$][\w$]*$/;
/** Python's order of kinds: a parameter may not follow one of a later kind. */
const KIND_ORDER: Record<TaskParameterKind, number> = { positional_only: 0, var_positional: 1, keyword_only: 2, var_keyword: 3 };

function isJson(value: unknown): value is JsonValue {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value);
  if (Array.isArray(value)) return value.every(isJson);
  if (typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) return Object.values(value).every(isJson);
  return false;
}

/** The declared parameters, checked the way Python checks a `def` line. */
function taskParameters(task: string, declared: readonly TaskParameterDeclaration[]): TaskParameter[] {
  const seen = new Set<string>();
  let previous: TaskParameter | undefined;
  return declared.map((declaration) => {
    const { name, kind = 'positional_only', annotation } = declaration;
    const fail = (why: string) => new TypeError(`Task ${task}: parameter ${JSON.stringify(name)} ${why}`);
    if (typeof name !== 'string' || !PARAMETER_NAME.test(name)) throw fail('is not an identifier');
    if (seen.has(name)) throw fail('is declared twice');
    if (!Object.hasOwn(KIND_ORDER, kind)) throw fail(`has an unknown kind ${JSON.stringify(kind)}`);
    if (previous !== undefined && KIND_ORDER[kind] < KIND_ORDER[previous.kind as TaskParameterKind])
      throw fail(`(${kind}) follows a ${previous.kind} one`);
    if ((kind === 'var_positional' || kind === 'var_keyword') && previous?.kind === kind) throw fail(`is a second ${kind} parameter`);
    if ((kind === 'var_positional' || kind === 'var_keyword') && declaration.default !== undefined) throw fail('cannot have a default');
    if (declaration.default !== undefined && !isJson(declaration.default)) throw fail('has a default that is not JSON');
    if (
      kind === 'positional_only' &&
      declaration.default === undefined &&
      previous?.kind === 'positional_only' &&
      previous.default !== undefined
    ) {
      throw fail('has no default but follows a positional parameter with one');
    }
    if (annotation !== undefined && typeof annotation !== 'string') throw fail('has an annotation that is not text');
    seen.add(name);
    const parameter: TaskParameter = { name, kind };
    if (declaration.default !== undefined) parameter.default = declaration.default;
    if (annotation !== undefined) parameter.annotation = annotation;
    previous = parameter;
    return parameter;
  });
}

export function defineTask<F extends TaskRunFunction>(options: TaskOptions<F>): TaskDefinition<F> {
  if (!TASK_NAME.test(options.name)) throw new TypeError(`Invalid task name ${JSON.stringify(options.name)}`);
  if (typeof options.run !== 'function') throw new TypeError(`Task ${options.name} has no run function`);
  for (const [key, value] of [
    ['timeLimitSeconds', options.timeLimitSeconds],
    ['softTimeLimitSeconds', options.softTimeLimitSeconds],
  ] as const) {
    if (value !== undefined && !(typeof value === 'number' && value > 0))
      throw new TypeError(`Task ${options.name}: ${key} must be a positive number`);
  }
  if (
    options.maxRetries !== undefined &&
    options.maxRetries !== null &&
    !(Number.isInteger(options.maxRetries) && options.maxRetries >= 0)
  ) {
    throw new TypeError(`Task ${options.name}: maxRetries must be a non-negative integer or null`);
  }
  if (
    options.defaultRetryDelaySeconds !== undefined &&
    !(typeof options.defaultRetryDelaySeconds === 'number' && options.defaultRetryDelaySeconds >= 0)
  ) {
    throw new TypeError(`Task ${options.name}: defaultRetryDelaySeconds must be a number >= 0`);
  }
  return Object.freeze({
    [TASK_DEFINITION]: true as const,
    name: options.name,
    doc: options.doc ?? null,
    parameters: options.parameters === undefined ? null : Object.freeze(taskParameters(options.name, options.parameters)),
    run: options.run,
    timeLimitSeconds: options.timeLimitSeconds ?? null,
    softTimeLimitSeconds: options.softTimeLimitSeconds ?? null,
    ignoreResult: options.ignoreResult ?? false,
    maxRetries: options.maxRetries === undefined ? DEFAULT_MAX_RETRIES : options.maxRetries,
    defaultRetryDelaySeconds: options.defaultRetryDelaySeconds ?? DEFAULT_RETRY_DELAY_SECONDS,
  });
}

/** The task's signature for `cybercom_task_info`; null when it does not describe its parameters. */
export function taskSignature(task: TaskDefinition): { text: string; parameters: TaskParameter[] } | null {
  if (task.parameters === null) return null;
  return { text: signatureText(task.parameters), parameters: [...task.parameters] };
}

export function isTaskDefinition(value: unknown): value is TaskDefinition {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[TASK_DEFINITION] === true;
}
