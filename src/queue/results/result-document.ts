/**
 * Celery's MongoDB result-backend document (celery/backends/mongodb.py), written the way Celery 5.2.6 writes
 * it (`result` as JSON text, `date_done` as a naive-UTC ISO string for ready states) plus the
 * `result_extended` keys that Celery ≥ 5.3.4 readers index directly.
 */
import { isJsonObject, type JsonValue } from '../protocol/json.js';
import { decodeKombuEnvelopes } from '../protocol/kombu-envelopes.js';
import { parseExactJson, type ExactJsonValue } from '../protocol/exact-numbers.js';
import { pythonJsonDumps } from '../protocol/python-json.js';
import { formatNaiveUtcIsoformat, parseIsoTimestamp } from '../protocol/timestamps.js';
import { isExceptionInfo, type CeleryExceptionInfo, type RevokeReason } from './exceptions.js';
import { EXCEPTION_STATES, READY_STATES, isTaskState, type TaskState } from './states.js';

export interface ResultDocument {
  _id: string;
  status: TaskState;
  /** JSON text of the return value (or of the exception dict). */
  result: string;
  traceback: string | null;
  children: JsonValue[];
  /** ISO string written by us and Celery ≤ 5.3.3; BSON Date from Celery ≥ 5.3.4. */
  date_done: string | Date | null;
  parent_id?: string;
  group_id?: string;
  name: string | null;
  args: JsonValue[] | null;
  kwargs: { [key: string]: JsonValue } | null;
  worker: string | null;
  retries: number | null;
  queue: string | null;
}

/** What the worker knows about the request; fills the `result_extended` keys. */
export interface RequestMeta {
  name: string | null;
  args: JsonValue[] | null;
  kwargs: { [key: string]: JsonValue } | null;
  worker: string | null;
  retries: number | null;
  queue: string | null;
  parentId?: string | null;
  groupId?: string | null;
}

function document(
  taskId: string,
  status: TaskState,
  resultText: string,
  traceback: string | null,
  meta: RequestMeta,
  now: Date,
): ResultDocument {
  const doc: ResultDocument = {
    _id: taskId,
    status,
    result: resultText,
    traceback,
    children: [],
    date_done: READY_STATES.has(status) ? formatNaiveUtcIsoformat(now) : null,
    name: meta.name,
    args: meta.args,
    kwargs: meta.kwargs,
    worker: meta.worker,
    retries: meta.retries,
    queue: meta.queue,
  };
  // Celery adds these two only when set on the request.
  if (meta.groupId) doc.group_id = meta.groupId;
  if (meta.parentId) doc.parent_id = meta.parentId;
  return doc;
}

export function successDocument(taskId: string, value: unknown, meta: RequestMeta, now = new Date()): ResultDocument {
  return document(taskId, 'SUCCESS', pythonJsonDumps(value), null, meta, now);
}

export function failureDocument(
  taskId: string,
  exception: CeleryExceptionInfo,
  traceback: string | null,
  meta: RequestMeta,
  now = new Date(),
): ResultDocument {
  return document(taskId, 'FAILURE', pythonJsonDumps(exception), traceback, meta, now);
}

/** RETRY carries the exception the task gave as its reason, or null without one (as Celery stores it). */
export function retryDocument(
  taskId: string,
  exception: CeleryExceptionInfo | null,
  traceback: string | null,
  meta: RequestMeta,
  now = new Date(),
): ResultDocument {
  return document(taskId, 'RETRY', pythonJsonDumps(exception), traceback, meta, now);
}

export function revokedDocument(taskId: string, reason: RevokeReason, meta: RequestMeta, now = new Date()): ResultDocument {
  const exception: CeleryExceptionInfo = { exc_type: 'TaskRevokedError', exc_message: [reason], exc_module: 'celery.exceptions' };
  return document(taskId, 'REVOKED', pythonJsonDumps(exception), null, meta, now);
}

/** A task known to the worker but not finished or started (what Celery reports for unknown ids too). */
export function pendingDocument(taskId: string, meta: RequestMeta, now = new Date()): ResultDocument {
  return document(taskId, 'PENDING', 'null', null, meta, now);
}

/** STARTED carries `{"pid", "hostname"}` like Celery's track_started. */
export function startedDocument(
  taskId: string,
  info: { pid: number; hostname: string },
  meta: RequestMeta,
  now = new Date(),
): ResultDocument {
  return document(taskId, 'STARTED', pythonJsonDumps(info), null, meta, now);
}

/** A decoded result, as the API and tests consume it. */
export interface TaskResult {
  taskId: string;
  status: TaskState;
  /**
   * A state of the task's own (Celery's `update_state(state='PROGRESS', meta=...)`), verbatim;
   * `status` is then STARTED (the task is running) and `result` holds the meta.
   */
  customState?: string;
  /**
   * Return value for SUCCESS, the exception dict for FAILURE/REVOKED/RETRY, null when PENDING.
   * Numbers a Python task returned as `2.0` (or beyond 2^53) are kept as written (exact-numbers.ts).
   */
  result: ExactJsonValue;
  /** Set for exception states. */
  exception: CeleryExceptionInfo | null;
  traceback: string | null;
  children: JsonValue[];
  dateDone: Date | null;
  name: string | null;
  args: JsonValue[] | null;
  kwargs: { [key: string]: JsonValue } | null;
  worker: string | null;
  retries: number | null;
  queue: string | null;
}

export function pendingResult(taskId: string): TaskResult {
  return {
    taskId,
    status: 'PENDING',
    result: null,
    exception: null,
    traceback: null,
    children: [],
    dateDone: null,
    name: null,
    args: null,
    kwargs: null,
    worker: null,
    retries: null,
    queue: null,
  };
}

export class InvalidResultDocumentError extends Error {
  constructor(taskId: string, why: string) {
    super(`Result document ${taskId} is unreadable: ${why}`);
    this.name = 'InvalidResultDocumentError';
  }
}

/**
 * Reads a document written by us or by any Celery 5 worker: `result` JSON text (kombu 5.3
 * envelopes decoded) or a native BSON value (`result_serializer = "bson"`), `date_done` string
 * or Date, and the extended keys when present.
 */
/** Celery accepts any state name a task sets; a short printable one is taken as such. */
function isCustomState(value: unknown): value is string {
  return typeof value === 'string' && !isTaskState(value) && /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/.test(value);
}

export function decodeResultDocument(raw: Record<string, unknown>): TaskResult {
  const taskId = String(raw._id);
  const customState = isCustomState(raw.status) ? raw.status : undefined;
  if (!isTaskState(raw.status) && customState === undefined)
    throw new InvalidResultDocumentError(taskId, `unknown status ${JSON.stringify(raw.status)}`);
  const status: TaskState = customState === undefined ? (raw.status as TaskState) : 'STARTED';

  let result: ExactJsonValue = null;
  if (typeof raw.result === 'string') {
    try {
      result = decodeKombuEnvelopes(parseExactJson(raw.result) as ExactJsonValue);
    } catch (error) {
      throw new InvalidResultDocumentError(taskId, `result is not JSON text (${(error as Error).message})`);
    }
  } else if (raw.result !== undefined && raw.result !== null) {
    if (raw.result instanceof Uint8Array || (isJsonObject(raw.result) && raw.result._bsontype === 'Binary')) {
      throw new InvalidResultDocumentError(taskId, 'result is binary (pickle/msgpack serializer), only JSON is supported');
    }
    result = raw.result as JsonValue;
  }

  const exception = EXCEPTION_STATES.has(status) && isExceptionInfo(result) ? result : null;
  return {
    taskId,
    status,
    ...(customState === undefined ? {} : { customState }),
    result,
    exception,
    traceback: typeof raw.traceback === 'string' ? raw.traceback : null,
    children: Array.isArray(raw.children) ? (raw.children as JsonValue[]) : [],
    dateDone: readDate(raw.date_done),
    name: typeof raw.name === 'string' ? raw.name : null,
    args: Array.isArray(raw.args) ? (raw.args as JsonValue[]) : null,
    kwargs: isJsonObject(raw.kwargs) ? raw.kwargs : null,
    worker: typeof raw.worker === 'string' ? raw.worker : null,
    retries: typeof raw.retries === 'number' ? raw.retries : null,
    queue: typeof raw.queue === 'string' ? raw.queue : null,
  };
}

function readDate(value: unknown): Date | null {
  if (value instanceof Date) return value;
  if (typeof value === 'string') return parseIsoTimestamp(value);
  return null;
}
