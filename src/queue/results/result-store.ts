/**
 * Reads and writes Celery result documents in one MongoDB collection (default
 * `<database>.tombstone`). Like Celery, every state change replaces the whole document.
 */
import type { Collection, Document, MongoClient } from 'mongodb';
import type { CeleryExceptionInfo, RevokeReason } from './exceptions.js';
import {
  decodeResultDocument,
  failureDocument,
  InvalidResultDocumentError,
  pendingDocument,
  pendingResult,
  retryDocument,
  revokedDocument,
  startedDocument,
  successDocument,
  type RequestMeta,
  type ResultDocument,
  type TaskResult,
} from './result-document.js';
import { READY_STATES, isTaskState, type TaskState } from './states.js';
import { signalOption } from '../../db/deadline.js';
import { formatNaiveUtcIsoformat } from '../protocol/timestamps.js';
import { noDeadline, type Deadline } from '../../lib/deadline.js';
import { KeyBatch } from '../../lib/key-batch.js';

export const DEFAULT_RESULT_COLLECTION = 'tombstone';

/**
 * Field of a result document counting how often a worker began running the task, per retry
 * (`{"r0": 2}`): a Celery retry is a new message with the same id, and is counted afresh. Every
 * full write of the document (a final state) drops the count, which is only needed meanwhile.
 */
export const DELIVERIES_FIELD = 'cybercom_deliveries';

/** A start counted, or not counted because the task already has a final state. */
export type DeliveryCount = { count: number; finalState: null } | { count: null; finalState: TaskState };

export interface ResultStoreOptions {
  database: string;
  collection?: string;
  /**
   * Bounds each read and write a caller waits for (the API passes MONGO_OPERATION_TIMEOUT_MS, so
   * a request never waits on an engine that stopped answering); none by default.
   */
  deadline?: Deadline;
}

/** How long a waiting request's poll waits for the polls of other waits to share its query. */
const WAIT_BATCH_MS = 2;

export class ResultStore {
  /** The states the waits of this process poll, many tasks to a query (see waitForReady). */
  private readonly waitedStates = new KeyBatch<string, unknown>((ids) => this.states(ids), WAIT_BATCH_MS);
  readonly collection: Collection<ResultDocument>;
  private indexed: Promise<void> | null = null;
  private readonly deadline: Deadline;

  constructor(client: MongoClient, options: ResultStoreOptions) {
    this.collection = client.db(options.database).collection<ResultDocument>(options.collection ?? DEFAULT_RESULT_COLLECTION);
    this.deadline = options.deadline ?? noDeadline;
  }

  /** Replaces the task's document (upsert), as Celery's `_store_result` does. */
  async store(doc: ResultDocument): Promise<void> {
    void this.ensureIndex();
    await this.deadline((signal) => this.collection.replaceOne({ _id: doc._id }, doc, { upsert: true, ...signalOption(signal) }));
  }

  markStarted(taskId: string, info: { pid: number; hostname: string }, meta: RequestMeta): Promise<void> {
    return this.store(startedDocument(taskId, info, meta));
  }

  markSuccess(taskId: string, value: unknown, meta: RequestMeta): Promise<void> {
    return this.store(successDocument(taskId, value, meta));
  }

  markFailure(taskId: string, exception: CeleryExceptionInfo, traceback: string | null, meta: RequestMeta): Promise<void> {
    return this.store(failureDocument(taskId, exception, traceback, meta));
  }

  /**
   * Stores RETRY unless the task already has a final state: the retry message is sent before
   * this write, and its run on another worker may finish first.
   */
  async markRetry(taskId: string, exception: CeleryExceptionInfo | null, traceback: string | null, meta: RequestMeta): Promise<void> {
    void this.ensureIndex();
    const doc = retryDocument(taskId, exception, traceback, meta);
    try {
      await this.collection.replaceOne({ _id: taskId, status: { $nin: [...READY_STATES] } }, doc, { upsert: true });
    } catch (error) {
      // The filter missed a finished document and the upsert then clashed on its _id: keep it.
      if ((error as { code?: unknown }).code !== 11000) throw error;
    }
  }

  markRevoked(taskId: string, reason: RevokeReason, meta: RequestMeta): Promise<void> {
    return this.store(revokedDocument(taskId, reason, meta));
  }

  /**
   * Stores REVOKED for a task no worker has recorded as started or finished; answers whether it
   * did. A worker reads it before starting the task (countDelivery) and drops the task.
   */
  async markRevokedIfQueued(taskId: string, meta: RequestMeta): Promise<boolean> {
    void this.ensureIndex();
    try {
      await this.deadline((signal) =>
        this.collection.replaceOne(
          { _id: taskId, status: { $nin: ['STARTED', ...READY_STATES] } },
          revokedDocument(taskId, 'revoked', meta),
          { upsert: true, ...signalOption(signal) },
        ),
      );
      return true;
    } catch (error) {
      // The filter missed a started or finished task and the upsert clashed on its _id.
      if ((error as { code?: unknown }).code !== 11000) throw error;
      return false;
    }
  }

  /**
   * Adds `increment` (one start, or 0 to only read the count) to the task's start count
   * (atomically, so every worker sees every start) and answers the count for this retry. With `started`, the document becomes STARTED in the same
   * write (track_started); otherwise a missing document is created PENDING, so readers never
   * meet a document without a state.
   *
   * A task whose document already holds a final state is not counted and its state is answered
   * instead: it finished elsewhere, or it was revoked before any worker started it (the API
   * records REVOKED for a queued task whose submitter lost the rights it was sent with).
   */
  async countDelivery(
    taskId: string,
    retries: number,
    meta: RequestMeta,
    started?: { pid: number; hostname: string },
    increment = 1,
  ): Promise<DeliveryCount> {
    void this.ensureIndex();
    const { filter, update, key } = deliveryUpdate(taskId, retries, meta, started, increment);
    const collection = this.collection as unknown as Collection<{ _id: string }>;
    for (let attempt = 0; ; attempt++) {
      try {
        const doc = await collection.findOneAndUpdate(filter, update, { upsert: true, returnDocument: 'after' });
        return { count: countedDeliveries(doc as Document | null, key, increment), finalState: null };
      } catch (error) {
        // The filter missed a document with a final state and the upsert clashed on its _id; or
        // another worker's first start created the document meanwhile (then try once more).
        if ((error as { code?: unknown }).code !== 11000) throw error;
        const row = await this.collection.findOne({ _id: taskId }, { projection: { status: 1 } });
        const status: unknown = row?.status;
        if (isTaskState(status) && READY_STATES.has(status)) return { count: null, finalState: status };
        if (attempt > 0) throw error;
      }
    }
  }

  /** Whether the task already has a final state (SUCCESS, FAILURE, REVOKED). */
  async isReady(taskId: string): Promise<boolean> {
    const status = await this.status(taskId);
    return isTaskState(status) && READY_STATES.has(status);
  }

  /** Removes the PENDING document countDelivery created for a task whose result is not kept. */
  async forgetDeliveries(taskId: string): Promise<void> {
    await this.collection.deleteOne({ _id: taskId, status: 'PENDING' });
  }

  /** The task's result; PENDING when no document exists (Celery's convention). */
  async get(taskId: string): Promise<TaskResult> {
    const doc = await this.deadline((signal) => this.collection.findOne({ _id: taskId }, { signal }));
    return doc === null ? pendingResult(taskId) : decodeResultDocument(doc as unknown as Record<string, unknown>);
  }

  /** The task's state as stored (undefined without a document). */
  private async status(taskId: string): Promise<unknown> {
    const row = await this.deadline((signal) => this.collection.findOne({ _id: taskId }, { projection: { status: 1 }, signal }));
    return row?.status;
  }

  /**
   * Polls until the task is ready or the time is up; returns the ready result, or else the last
   * state seen. The first polls come quickly (5, 10, 20 ms ...) because most tasks finish within
   * milliseconds; the interval then doubles up to `intervalMs` so a long wait costs few queries.
   * The polls of all the waits of this process share their queries: a poll joins the others
   * made within WAIT_BATCH_MS, and once at `intervalMs` each wait polls on the same beat (the
   * clock's multiples of it), so any number of long waits cost one query per beat together.
   *
   * Only the state is polled, and only a ready document is decoded. What a task's document holds
   * while it runs is up to the worker — a Celery task's own `update_state(state='PROGRESS',
   * meta=...)` among others — and a wait that ends before the task must not fail on it: such a
   * document, when it cannot be decoded, is reported as the last state seen in its place
   * (STARTED for a state of the task's own, PENDING for anything else).
   */
  async waitForReady(taskId: string, options: { timeoutMs: number; intervalMs?: number; signal?: AbortSignal }): Promise<TaskResult> {
    const deadline = Date.now() + options.timeoutMs;
    const maxInterval = options.intervalMs ?? 100;
    let interval = Math.min(5, maxInterval);
    for (;;) {
      const status = await this.waitedStates.get(taskId);
      if (isTaskState(status) && READY_STATES.has(status)) return this.get(taskId);
      const now = Date.now();
      if (now >= deadline || options.signal?.aborted) return this.unfinished(taskId, status);
      const pause = interval < maxInterval ? interval : maxInterval - (now % maxInterval);
      await new Promise((resolve) => setTimeout(resolve, Math.min(pause, deadline - now)));
      interval = Math.min(interval * 2, maxInterval);
    }
  }

  /** A task that is not ready: its document when it reads, else just a state. */
  private async unfinished(taskId: string, status: unknown): Promise<TaskResult> {
    if (status === undefined) return pendingResult(taskId);
    try {
      return await this.get(taskId);
    } catch (error) {
      if (!(error instanceof InvalidResultDocumentError)) throw error;
      return { ...pendingResult(taskId), status: typeof status === 'string' && !isTaskState(status) ? 'STARTED' : 'PENDING' };
    }
  }

  /** The stored states of several tasks (absent: no document yet). */
  async states(taskIds: readonly string[]): Promise<Map<string, unknown>> {
    if (taskIds.length === 0) return new Map();
    const rows = await this.deadline((signal) =>
      this.collection.find({ _id: { $in: [...taskIds] } }, { projection: { status: 1 }, signal }).toArray(),
    );
    return new Map(rows.map((row) => [String(row._id), row.status]));
  }

  /**
   * Tasks that succeeded or failed within [from, until), at most `limit`: `date_done` and status
   * only. `date_done` is a naive-UTC ISO string from Celery, or a date from newer versions.
   */
  ended(from: Date, until: Date, limit: number): AsyncIterable<Pick<ResultDocument, 'status' | 'date_done'>> {
    return this.collection
      .find(
        {
          status: { $in: ['SUCCESS', 'FAILURE'] },
          $or: [
            { date_done: { $gte: formatNaiveUtcIsoformat(from), $lt: formatNaiveUtcIsoformat(until) } },
            { date_done: { $gte: from, $lt: until } },
          ],
        },
        { projection: { status: 1, date_done: 1 } },
      )
      .limit(limit);
  }

  /** The index failures are listed by, newest first (see `latestFailures`). */
  async ensureFailureIndex(): Promise<void> {
    await this.collection.createIndex({ status: 1, date_done: -1 });
  }

  /** The latest `limit` failures, newest first; only among `taskIds` when given. */
  latestFailures(limit: number, taskIds?: readonly string[]): Promise<ResultDocument[]> {
    const filter: Document = { status: 'FAILURE', ...(taskIds === undefined ? {} : { _id: { $in: [...taskIds] } }) };
    return this.deadline((signal) => this.collection.find(filter, { signal }).sort({ date_done: -1 }).limit(limit).toArray());
  }

  /** Celery indexes `date_done` (its clean-up deletes by it); failures are harmless. */
  protected ensureIndex(): Promise<void> {
    this.indexed ??= this.collection
      .createIndex({ date_done: 1 })
      .then(() => undefined)
      .catch(() => {
        this.indexed = null;
      });
    return this.indexed;
  }
}

/**
 * The write behind `countDelivery`: one more start of retry `retries` counted (the filter skips a
 * document with a final state), the document created PENDING or made STARTED with it.
 */
export function deliveryUpdate(
  taskId: string,
  retries: number,
  meta: RequestMeta,
  started?: { pid: number; hostname: string },
  increment = 1,
): { filter: Document; update: Document; key: string } {
  const key = `r${retries}`;
  const { _id: _ignored, ...fields } = started ? startedDocument(taskId, started, meta) : pendingDocument(taskId, meta);
  const update: Document = { $inc: { [`${DELIVERIES_FIELD}.${key}`]: increment } };
  update[started ? '$set' : '$setOnInsert'] = fields;
  return { filter: { _id: taskId, status: { $nin: [...READY_STATES] } }, update, key };
}

/** The count `deliveryUpdate` left in a document (`increment` when it is gone: a final state replaced it meanwhile). */
export function countedDeliveries(doc: Document | null | undefined, key: string, increment = 1): number {
  const counts: unknown = doc?.[DELIVERIES_FIELD];
  const count = counts !== null && typeof counts === 'object' ? (counts as Record<string, unknown>)[key] : undefined;
  return typeof count === 'number' ? count : increment;
}
