/**
 * Celery's built-in `celery.chord_unlock`, so that a chord whose body runs on this worker
 * completes. With the MongoDB result backend Celery has no join of its own: the client that
 * applies the chord sends `celery.chord_unlock(group_id, body, result=[header result tuples])`
 * to the body's queue, and that task polls the header results (retrying itself every
 * `interval` seconds) until all are ready. Then it sends the body with the list of header
 * results as its first argument, or, when a header task failed, stores a ChordError FAILURE
 * for the body and sends the body's errbacks.
 */
import { isJsonObject, type JsonValue } from '../queue/protocol/json.js';
import type { ExactJsonValue } from '../queue/protocol/exact-numbers.js';
import type { PublishTaskInput } from '../queue/publishing/task-publisher.js';
import { PythonException, exceptionRepr, toExceptionInfo, type CeleryExceptionInfo } from '../queue/results/exceptions.js';
import type { ResultStore } from '../queue/results/result-store.js';
import { READY_STATES } from '../queue/results/states.js';
import { InvalidSignatureError, parseSignature, parseSignatureList, signatureMessages, type Signature } from './canvas.js';
import { defineTask, type TaskContext, type TaskDefinition } from './task-definition.js';

export const CHORD_UNLOCK_TASK = 'celery.chord_unlock';
/** Celery's `result_chord_retry_interval` default. */
const DEFAULT_INTERVAL_SECONDS = 1;

export class ChordError extends PythonException {
  constructor(message: string) {
    super('ChordError', [message], 'celery.exceptions');
  }
}

export interface ChordUnlockServices {
  results: () => ResultStore;
  publish: (messages: PublishTaskInput[]) => Promise<void>;
  defaultQueue: string;
}

/** A header result as `AsyncResult.as_tuple()` writes it: `[[id, parent], null]`, or `[[id, parent], [members...]]` for a nested group. */
type HeaderResult = { id: string; members: HeaderResult[] | null };

export function parseHeaderResults(value: JsonValue | undefined): HeaderResult[] {
  if (!Array.isArray(value)) throw new InvalidSignatureError('chord_unlock: "result" is not a list of result tuples');
  return value.map((entry) => {
    const head = Array.isArray(entry) ? entry[0] : undefined;
    const id = Array.isArray(head) ? head[0] : undefined;
    if (typeof id !== 'string') throw new InvalidSignatureError(`chord_unlock: unreadable result tuple ${JSON.stringify(entry)}`);
    const members = Array.isArray(entry) && Array.isArray(entry[1]) ? parseHeaderResults(entry[1]) : null;
    return { id, members };
  });
}

type Joined =
  { ready: false } | { ready: true; values: ExactJsonValue[] } | { ready: true; failed: { id: string; exception: CeleryExceptionInfo } };

/** Celery's GroupResult.ready() then join(propagate=True): the values in header order, or the first failure. */
export async function joinResults(store: ResultStore, results: HeaderResult[]): Promise<Joined> {
  const values: ExactJsonValue[] = [];
  let failed: { id: string; exception: CeleryExceptionInfo } | null = null;
  for (const result of results) {
    if (result.members !== null) {
      const inner = await joinResults(store, result.members);
      if (!inner.ready) return inner;
      if ('failed' in inner) failed ??= inner.failed;
      else values.push(inner.values);
      continue;
    }
    const stored = await store.get(result.id);
    if (!READY_STATES.has(stored.status)) return { ready: false };
    if (stored.status === 'SUCCESS') values.push(stored.result);
    else failed ??= { id: result.id, exception: stored.exception ?? toExceptionInfo(new Error(String(stored.status))) };
  }
  return failed ? { ready: true, failed } : { ready: true, values };
}

export function chordUnlockTask(services: ChordUnlockServices): TaskDefinition {
  return defineTask({
    name: CHORD_UNLOCK_TASK,
    doc: 'Sends the body of a chord once its header tasks are ready (Celery built-in).',
    ignoreResult: true,
    maxRetries: null,
    defaultRetryDelaySeconds: DEFAULT_INTERVAL_SECONDS,
    run: async (ctx: TaskContext, groupId: unknown, callback: JsonValue): Promise<null> => {
      const body = parseSignature(callback);
      const header = parseHeaderResults(ctx.kwargs.result);
      const interval = typeof ctx.kwargs.interval === 'number' ? ctx.kwargs.interval : DEFAULT_INTERVAL_SECONDS;
      const maxRetries = typeof ctx.kwargs.max_retries === 'number' ? ctx.kwargs.max_retries : null;
      const store = services.results();
      const joined = await joinResults(store, header);
      if (!joined.ready) ctx.retry({ countdown: interval, maxRetries });
      const rootId = ctx.rootId ?? ctx.taskId;
      if ('failed' in joined) {
        const error = new ChordError(`Dependency ${joined.failed.id} raised ${exceptionRepr(joined.failed.exception)}`);
        ctx.logger.warn({ groupId, dependency: joined.failed.id }, 'chord header failed; failing its body');
        await failBody(store, services, body, error, rootId);
        return null;
      }
      await services.publish(
        signatureMessages(body, { args: [joined.values], parentId: ctx.taskId, rootId, defaultQueue: services.defaultQueue }),
      );
      return null;
    },
  });
}

/** Celery's chord_error_from_stack: the body's errbacks get its id, and the body is stored as failed. */
async function failBody(
  store: ResultStore,
  services: ChordUnlockServices,
  body: Signature,
  error: ChordError,
  rootId: string,
): Promise<void> {
  const bodyId = typeof body.options.task_id === 'string' ? body.options.task_id : null;
  if (bodyId === null) return;
  const errbacks = parseSignatureList(isJsonObject(body.options) ? body.options.link_error : null);
  await services.publish(
    errbacks.flatMap((errback) =>
      signatureMessages(errback, { args: [bodyId], parentId: bodyId, rootId, defaultQueue: services.defaultQueue }),
    ),
  );
  await store.markFailure(bodyId, toExceptionInfo(error), null, {
    name: body.task,
    args: body.args,
    kwargs: body.kwargs,
    worker: null,
    retries: 0,
    queue: null,
  });
}
