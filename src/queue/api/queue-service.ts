/**
 * The API's side of the task queue: submit (publisher confirm, then the log), inspect one run,
 * revoke, and the caller's history. Owns the broker session, so the API reconnects by itself
 * after a broker outage; while it is down, submissions get 503 and history keeps working.
 */
import { randomUUID } from 'node:crypto';
import type { Db, MongoClient } from 'mongodb';
import type { BrokerSettings } from '../../config/connections.js';
import type { Logger } from '../../log/logger.js';
import { QueueUnavailableError } from '../errors.js';
import { BrokerSession } from '../connection/broker-session.js';
import type { TaskQueueType } from '../../config/connections.js';
import { WorkerEvents } from '../events/worker-events.js';
import { ControlClient } from '../remote-control/control-client.js';
import { TaskPublisher, mayHaveBeenPublished } from '../publishing/task-publisher.js';
import { storedArgs, storedKwargs } from './stored-arguments.js';
import { ResultStore } from '../results/result-store.js';
import { decodeResultDocument, type RequestMeta, type TaskResult } from '../results/result-document.js';
import { cursorOver, type CountedRows } from '../../lib/paging.js';
import { READY_STATES, type TaskState } from '../results/states.js';
import { TaskCatalog } from './task-catalog.js';
import { TaskLog, loggedState, type HistoryFilter, type LogBrowseFilter, type LogBrowseQuery, type TaskLogEntry } from './task-log.js';
import type { Submission } from './submission.js';
import { encodeSubmitterAccess, type SubmitterAccess } from '../protocol/submitter-access.js';
import { operationDeadline } from '../../db/deadline.js';
import { noDeadline, type Deadline } from '../../lib/deadline.js';

export interface QueueServiceOptions {
  broker: BrokerSettings;
  mongo: MongoClient;
  serviceDb: Db;
  resultCollection: string;
  catalogCacheSeconds: number;
  /** How long a task-list broadcast gathers replies; 1 s when absent. */
  catalogReplyTimeoutMs?: number;
  /**
   * The ids of the accounts that bear these names now: for history entries written before it was
   * kept by account id (each taken to be its name's account when the history is first opened).
   */
  userIdsByName?: (usernames: readonly string[]) => Promise<Map<string, string>>;
  /** The deadline of each database operation a request waits for (MONGO_OPERATION_TIMEOUT_MS); none when absent. */
  operationTimeoutMs?: number;
  logger: Logger;
}

/** What a task id may look like (anything else is "no such task"). */
export const TASK_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

/** Task ids per result lookup while settling states. */
const SETTLE_BATCH = 1000;
/** When the queued tasks of users who lost rights are revoked once more: after the API's account cache (2 s) has let go of the old rights. */
const RIGHTS_RESWEEP_MS = 3_000;

export type { LogBrowseFilter, LogBrowseQuery, TaskLogEntry, TaskResult };
export { LOG_BROWSE_SORTS } from './task-log.js';

/** A failed task as the administration site lists it: its result, and its log entry when the API submitted it. */
export interface FailedTask {
  result: TaskResult;
  entry: TaskLogEntry | undefined;
}

export interface SubmittedTask {
  taskId: string;
  queue: string;
}

/** What a revoke records of the task (its history entry's fields). */
export type RevokedTask = Pick<TaskLogEntry, 'task_id' | 'task_name' | 'args' | 'kwargs' | 'queue'>;

/** What only the scheduler sets: the task id it claimed the fire under, the task's expiry, and its eta. */
export interface SubmitOptions {
  taskId?: string;
  expires?: Date;
  /** Not to run before then (Celery's `eta`): workers hold the message until that time. */
  eta?: Date;
}

/** One submission of `submitMany`, with the arguments `submit` takes. */
export interface SubmissionRequest {
  submitter: SubmitterAccess;
  userId: string;
  taskName: string;
  submission: Submission;
  queue: string;
  options?: SubmitOptions;
}

function logEntryOf(item: SubmissionRequest, taskId: string): Omit<TaskLogEntry, '_id' | 'state'> {
  return {
    task_id: taskId,
    user_id: item.userId,
    user: item.submitter.username,
    task_name: item.taskName,
    args: storedArgs(item.submission.args),
    kwargs: storedKwargs(item.submission.kwargs),
    queue: item.queue,
    tags: item.submission.tags,
    timestamp: new Date(),
  };
}

/** One run of the history: its log entry and its current state. */
export interface HistoryRow {
  entry: TaskLogEntry;
  status: TaskState;
}

/** Told of every task the broker accepted from this process (the admin's Operations page counts them). */
export type SubmissionListener = (task: SubmittedTask & { taskName: string }) => void;

export class QueueService {
  readonly session: BrokerSession;
  /** How the dead-letter queue is declared (TASK_QUEUE_TYPE), like the workers declare it. */
  readonly queueType: TaskQueueType;
  readonly control: ControlClient;
  /** The workers' events, heard once for everything in this process that listens. */
  readonly events: WorkerEvents;
  readonly catalog: TaskCatalog;
  readonly results: ResultStore;
  readonly log: TaskLog;
  private readonly publisher: TaskPublisher;
  private readonly logger: Logger;
  private readonly submissionListeners = new Set<SubmissionListener>();
  private readonly pendingSweeps = new Set<NodeJS.Timeout>();
  private readonly deadline: Deadline;

  constructor(options: QueueServiceOptions) {
    this.logger = options.logger;
    this.deadline = options.operationTimeoutMs === undefined ? noDeadline : operationDeadline(options.operationTimeoutMs);
    this.session = new BrokerSession({ settings: options.broker });
    this.queueType = options.broker.queueType ?? 'classic';
    this.session.on('disconnected', () => options.logger.warn('broker connection lost; reconnecting'));
    this.session.on('connected', () => options.logger.info({ node: this.session.address }, 'broker connected'));
    this.session.on('retrying', (error, delayMs) => options.logger.debug({ err: error.message, delayMs }, 'broker reconnect scheduled'));
    this.control = new ControlClient({ session: this.session });
    this.events = new WorkerEvents({ session: this.session, control: this.control, logger: options.logger });
    // Queues are declared by the workers that consume them; the API only checks they exist,
    // so it never creates a queue with arguments that differ from a worker's.
    this.publisher = new TaskPublisher({ session: this.session, declareQueues: 'passive' });
    this.catalog = new TaskCatalog(this.control, {
      cacheSeconds: options.catalogCacheSeconds,
      replyTimeoutMs: options.catalogReplyTimeoutMs ?? 1_000,
    });
    this.results = new ResultStore(options.mongo, {
      database: options.serviceDb.databaseName,
      collection: options.resultCollection,
      deadline: this.deadline,
    });
    this.log = new TaskLog(options.serviceDb, this.deadline, options.userIdsByName);
  }

  start(): this {
    this.session.start();
    void this.log.ensureIndexes();
    return this;
  }

  /**
   * Records the submission, then publishes it (resolving after the broker's confirm): a task is
   * either accepted and in the history, or refused and never published. A log write that fails
   * refuses the submission before anything reaches the broker; a publish that certainly failed
   * removes the entry again; a publish whose outcome is unknown (no confirm) leaves the entry,
   * marked, so the task can still be found and revoked. The message names the submitter and
   * carries their data-store permissions, which workers check without reading the service's
   * users (see submitter-access.ts).
   */
  async submit(
    submitter: SubmitterAccess,
    userId: string,
    taskName: string,
    submission: Submission,
    queue: string,
    options: SubmitOptions = {},
  ): Promise<SubmittedTask> {
    const taskId = options.taskId ?? randomUUID();
    await this.log.record(logEntryOf({ submitter, userId, taskName, submission, queue, options }, taskId));
    return this.publishLogged(submitter, taskId, taskName, submission, queue, options);
  }

  /**
   * Many submissions at once, each as `submit` makes it: their history entries in one insert.
   * Resolves once the entries are written, with what publishes them: every message side by side
   * (one confirm round trip covers many), each one's outcome the task or the error `submit` would
   * have thrown for it. Apart, so that a caller with many such batches can write the next one's
   * entries while the broker confirms this one's messages.
   */
  async recordMany(items: readonly SubmissionRequest[]): Promise<() => Promise<(SubmittedTask | Error)[]>> {
    const withIds = items.map((item) => ({ ...item, options: { ...item.options, taskId: item.options?.taskId ?? randomUUID() } }));
    const logged = await this.log.recordMany(withIds.map((item) => logEntryOf(item, item.options.taskId)));
    return () => this.publishRecorded(withIds, logged);
  }

  /**
   * Writes the history entries of submissions ahead of their publication (the scheduler's burst
   * of fires, see scheduler.ts): nobody sees them until `log.reveal` (see task-log.ts). Each
   * item's error, or null when its entry was written. Every item names its task id.
   */
  recordAhead(items: readonly (SubmissionRequest & { options: { taskId: string } })[]): Promise<(Error | null)[]> {
    return this.log.recordMany(
      items.map((item) => logEntryOf(item, item.options.taskId)),
      true,
    );
  }

  /**
   * Publishes submissions whose history entries are written (by `recordMany` or `recordAhead`),
   * every message side by side: each one's outcome, the task or the error `submit` would have
   * thrown for it. `failed`: the items whose entries could not be written, which are not published.
   */
  publishRecorded(
    items: readonly (SubmissionRequest & { options: { taskId: string } })[],
    failed: readonly (Error | null)[] = [],
  ): Promise<(SubmittedTask | Error)[]> {
    return Promise.all(
      items.map(async (item, i) => {
        const refused = failed[i];
        if (refused !== null && refused !== undefined) return refused;
        try {
          return await this.publishLogged(item.submitter, item.options.taskId, item.taskName, item.submission, item.queue, item.options);
        } catch (error) {
          return error instanceof Error ? error : new Error(String(error));
        }
      }),
    );
  }

  /** Publishes a submission whose history entry is written (see submit). */
  private async publishLogged(
    submitter: SubmitterAccess,
    taskId: string,
    taskName: string,
    submission: Submission,
    queue: string,
    options: SubmitOptions,
  ): Promise<SubmittedTask> {
    const user = submitter.username;
    try {
      await this.publisher.publish({
        taskName,
        taskId,
        args: submission.args,
        kwargs: submission.kwargs,
        queue,
        authenticatedUser: user,
        headers: encodeSubmitterAccess(submitter),
        expires: options.expires,
        eta: options.eta,
      });
    } catch (error) {
      const mayHaveRun = mayHaveBeenPublished(error);
      await this.settleRefusedSubmission(taskId, mayHaveRun);
      if (mayHaveRun && error instanceof QueueUnavailableError) {
        throw new QueueUnavailableError(error.code, `${error.message} The task may still run; it is in your history as ${taskId}.`, {
          task_id: taskId,
        });
      }
      throw error;
    }
    for (const listener of this.submissionListeners) listener({ taskId, taskName, queue });
    return { taskId, queue };
  }

  /** Calls `listener` for every accepted submission until the returned function is called. */
  onSubmitted(listener: SubmissionListener): () => void {
    this.submissionListeners.add(listener);
    return () => this.submissionListeners.delete(listener);
  }

  private async settleRefusedSubmission(taskId: string, mayHaveRun: boolean): Promise<void> {
    try {
      await this.log.settleRefused(taskId, mayHaveRun);
    } catch (error) {
      this.logger.error({ err: error, taskId, mayHaveRun }, 'could not settle the history entry of a submission the broker did not take');
    }
  }

  waitForResult(taskId: string, seconds: number): Promise<TaskResult> {
    return this.results.waitForReady(taskId, { timeoutMs: seconds * 1000, intervalMs: 50 });
  }

  /**
   * Broadcasts `revoke` (workers skip the task, or abort it with `terminate`) and records
   * REVOKED for a task that has not finished, as Celery's own backend would once a worker sees it.
   */
  async revoke(entry: RevokedTask, terminate: boolean): Promise<TaskResult> {
    await this.control.revoke(entry.task_id, { terminate, signal: 'SIGTERM' });
    const current = await this.results.get(entry.task_id);
    if (READY_STATES.has(current.status)) return current;
    const meta: RequestMeta = {
      name: entry.task_name,
      args: entry.args,
      kwargs: entry.kwargs,
      worker: null,
      retries: 0,
      queue: entry.queue,
    };
    await this.results.markRevoked(entry.task_id, terminate ? 'terminated' : 'revoked', meta);
    return this.results.get(entry.task_id);
  }

  /**
   * Revokes the tasks of the accounts `userIds` that no worker has started yet, for users who lost rights
   * their tasks carry (deactivated, deleted, a permission or group taken away): REVOKED is
   * recorded in the results, which every worker reads before it starts a task, so this holds
   * for workers that are offline now, remote, or started later, and whichever API process did
   * it; then the revoke is broadcast, so workers holding such a task drop it at once. Tasks
   * already running finish. Done once more a little later, for tasks submitted meanwhile with
   * rights an API process had read before the change (it keeps accounts for up to 2 s).
   * Resolves with the ids revoked.
   */
  async revokeQueuedTasksOf(userIds: readonly string[]): Promise<string[]> {
    if (userIds.length === 0) return [];
    const again = setTimeout(() => {
      this.pendingSweeps.delete(again);
      this.revokeQueued(userIds).catch((err: unknown) =>
        this.logger.error({ err, users: userIds }, 'could not revoke the queued tasks of users who lost rights'),
      );
    }, RIGHTS_RESWEEP_MS);
    again.unref();
    this.pendingSweeps.add(again);
    return this.revokeQueued(userIds);
  }

  private async revokeQueued(userIds: readonly string[]): Promise<string[]> {
    const entries = await this.log.open(userIds);
    const revoked: string[] = [];
    for (const entry of entries) {
      const meta: RequestMeta = {
        name: entry.task_name,
        args: entry.args,
        kwargs: entry.kwargs,
        worker: null,
        retries: 0,
        queue: entry.queue,
      };
      if (await this.results.markRevokedIfQueued(entry.task_id, meta)) revoked.push(entry.task_id);
    }
    if (revoked.length === 0) return revoked;
    await this.log.recordStates(revoked.map((id) => ({ id, state: 'REVOKED' })));
    this.logger.info({ users: userIds, tasks: revoked.length }, 'revoked the queued tasks of users who lost rights');
    // Best effort: a worker that misses it reads REVOKED before starting the task.
    await this.control.revoke(revoked).catch((err: unknown) => this.logger.warn({ err }, 'could not broadcast the revoke'));
    return revoked;
  }

  /** States of several tasks at once (PENDING when no result document exists). */
  async states(taskIds: string[]): Promise<Map<string, TaskState>> {
    const states = new Map<string, TaskState>(taskIds.map((id) => [id, 'PENDING']));
    if (taskIds.length === 0) return states;
    for (const [id, status] of await this.results.states(taskIds)) states.set(id, status as TaskState);
    return states;
  }

  /**
   * Brings the states the log keeps for the account `userId` up to date with the results, for the entries whose
   * state may still change: those not yet in a ready state. Their number is what this costs (the
   * user's queued and running tasks, and tasks stuck without a result), not the history's length.
   * Resolves with whether any state changed.
   */
  private async settleStates(userId: string): Promise<boolean> {
    const open = await this.log.unsettled(userId);
    const changed: { id: string; state: string }[] = [];
    const batches: (typeof open)[] = [];
    for (let i = 0; i < open.length; i += SETTLE_BATCH) batches.push(open.slice(i, i + SETTLE_BATCH));
    // The batches are read at the same time: each is one round trip, none depends on another.
    await Promise.all(
      batches.map(async (batch) => {
        const current = await this.states(batch.map((entry) => entry.id));
        for (const entry of batch) {
          const state = loggedState(current.get(entry.id) ?? 'PENDING');
          if (state !== entry.state) changed.push({ id: entry.id, state });
        }
      }),
    );
    await this.log.recordStates(changed);
    return changed.length > 0;
  }

  /**
   * The caller's history, newest first, optionally only runs in one state: counted and read a
   * page at a time by the paginator, which reads the count and the page it guesses at the same
   * time (each page read is told the count, see TaskLog.page).
   */
  history(filter: HistoryFilter, status: TaskState | undefined): CountedRows<HistoryRow> {
    if (status === undefined) {
      const count = this.log.count(filter);
      return {
        count,
        open: (window) =>
          cursorOver(
            this.log.page(filter, window.skip, window.limit, undefined, count).then(async (entries) => {
              const states = await this.states(entries.map((e) => e._id));
              return entries.map((entry) => ({ entry, status: states.get(entry._id) ?? 'PENDING' }));
            }),
          ),
      };
    }
    // Filtered, counted and paged in the database, by the state the log keeps for each entry.
    // The count and the first page are read while the states are brought up to date, and read
    // again only when a state changed meanwhile; a page opened later reads the settled states.
    let settledAlready = false;
    const settled = this.settleStates(filter.userId).then((changed) => {
      settledAlready = true;
      return changed;
    });
    const earlyCount = this.log.count(filter, status);
    const count = Promise.all([settled, earlyCount]).then(([changed, early]) => (changed ? this.log.count(filter, status) : early));
    return {
      count,
      open: (window) => {
        const read = (matches: Promise<number>) => this.log.page(filter, window.skip, window.limit, status, matches);
        const entries = settledAlready
          ? read(count)
          : Promise.all([settled, read(earlyCount)]).then(([changed, early]) => (changed ? read(count) : early));
        return cursorOver(entries.then((rows) => rows.map((entry) => ({ entry, status }))));
      },
    };
  }

  // What the administration site reads of the log and the results. It is given these, never the
  // stores themselves, so the queue alone decides how both are kept and queried.

  /** The log entry of one task; null when the API did not submit it. */
  logEntry(taskId: string): Promise<TaskLogEntry | null> {
    return this.log.get(taskId);
  }

  /** The log entries of the tasks `taskIds` (id → entry); tasks the API did not submit are absent. */
  logEntries(taskIds: readonly string[]): Promise<Map<string, TaskLogEntry>> {
    return this.log.entries(taskIds);
  }

  /** Every account's log entries, filtered, sorted and paged (the administration site's task history). */
  browseLog(query: LogBrowseQuery): Promise<TaskLogEntry[]> {
    return this.log.browse(query);
  }

  countLog(filter: LogBrowseFilter): Promise<number> {
    return this.log.browseCount(filter);
  }

  /** The log's size from the collection's metadata (cheap, possibly a little off). */
  estimatedLogSize(): Promise<number> {
    return this.log.estimatedSize();
  }

  /** The index `latestFailures` is read by; see ResultStore.ensureFailureIndex. */
  ensureFailureIndex(): Promise<void> {
    return this.results.ensureFailureIndex();
  }

  /**
   * The latest `limit` failures, newest first, with their log entries: of every task, or with
   * `ofAccount` only among that account's latest `scanned` submissions. A result no reader of
   * this service can decode is left out.
   */
  async latestFailures(limit: number, ofAccount?: { userId: string; scanned: number }): Promise<FailedTask[]> {
    const own = ofAccount === undefined ? undefined : await this.log.latestIds(ofAccount.userId, ofAccount.scanned);
    const docs = await this.results.latestFailures(limit, own);
    const entries = await this.log.entries(docs.map((doc) => String(doc._id)));
    const failed: FailedTask[] = [];
    for (const doc of docs) {
      try {
        const result = decodeResultDocument(doc as unknown as Record<string, unknown>);
        failed.push({ result, entry: entries.get(result.taskId) });
      } catch {
        // A document written by a client this service cannot read.
      }
    }
    return failed;
  }

  /** The status and end time of tasks that succeeded or failed between `from` and `until` (at most `limit`). */
  endedTasks(from: Date, until: Date, limit: number): ReturnType<ResultStore['ended']> {
    return this.results.ended(from, until, limit);
  }

  /** Tells the workers to revoke a task the API did not submit (no log entry, no result to record). */
  async broadcastRevoke(taskId: string, terminate: boolean): Promise<void> {
    await this.control.revoke(taskId, { terminate, signal: 'SIGTERM' });
  }

  async close(): Promise<void> {
    for (const sweep of this.pendingSweeps) clearTimeout(sweep);
    this.pendingSweeps.clear();
    // The connection first: closing it ends every channel on it, so the parts' own closes then
    // return at once, even when the broker no longer answers (a channel close, or a channel still
    // being opened, would otherwise wait for it). The session bounds its own close.
    await this.session.close();
    await Promise.all([this.events.close(), this.publisher.close(), this.control.close()]);
  }
}
