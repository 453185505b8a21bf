/**
 * The API's side of the task queue: submit (publisher confirm, then the log), inspect one run,
 * revoke, and the caller's history. Owns the broker session, so the API reconnects by itself
 * after a broker outage; while it is down, submissions get 503 and history keeps working.
 */
import { randomUUID } from 'node:crypto';
import type { Db, MongoClient } from 'mongodb';
import type { BrokerSettings } from '../../config/connections.js';
import type { Logger } from '../../log/logger.js';
import { BrokerSession } from '../control/broker-session.js';
import { ControlClient } from '../control/control-client.js';
import { TaskPublisher } from '../control/task-publisher.js';
import { ResultStore } from '../results/result-store.js';
import type { RequestMeta, TaskResult } from '../results/result-document.js';
import { pageWindow, type PageRequest, type PageWindow } from '../../documents/paging.js';
import { READY_STATES, type TaskState } from '../results/states.js';
import { TaskCatalog } from './task-catalog.js';
import { TaskLog, type HistoryFilter, type TaskLogEntry } from './task-log.js';
import type { Submission } from './submission.js';

export interface QueueServiceOptions {
  broker: BrokerSettings;
  mongo: MongoClient;
  serviceDb: Db;
  resultCollection: string;
  catalogCacheSeconds: number;
  logger: Logger;
}

export interface SubmittedTask {
  taskId: string;
  queue: string;
}

export class QueueService {
  readonly session: BrokerSession;
  readonly control: ControlClient;
  readonly catalog: TaskCatalog;
  readonly results: ResultStore;
  readonly log: TaskLog;
  private readonly publisher: TaskPublisher;

  constructor(options: QueueServiceOptions) {
    this.session = new BrokerSession({ settings: options.broker });
    this.session.on('disconnected', () => options.logger.warn('broker connection lost; reconnecting'));
    this.session.on('connected', () => options.logger.info('broker connected'));
    this.session.on('retrying', (error, delayMs) => options.logger.debug({ err: error.message, delayMs }, 'broker reconnect scheduled'));
    this.control = new ControlClient({ session: this.session });
    // Queues are declared by the workers that consume them; the API only checks they exist,
    // so it never creates a queue with arguments that differ from a worker's.
    this.publisher = new TaskPublisher({ session: this.session, declareQueues: 'passive' });
    this.catalog = new TaskCatalog(this.control, { cacheSeconds: options.catalogCacheSeconds, replyTimeoutMs: 1_000 });
    this.results = new ResultStore(options.mongo, { database: options.serviceDb.databaseName, collection: options.resultCollection });
    this.log = new TaskLog(options.serviceDb);
  }

  start(): this {
    this.session.start();
    return this;
  }

  /** Publishes (resolving after the broker's confirm), then records the submission. */
  async submit(user: string, taskName: string, submission: Submission, queue: string): Promise<SubmittedTask> {
    const taskId = randomUUID();
    await this.publisher.publish({
      taskName,
      taskId,
      args: submission.args,
      kwargs: submission.kwargs,
      queue,
      authenticatedUser: user,
    });
    await this.log.record({
      task_id: taskId,
      user,
      task_name: taskName,
      args: submission.args,
      kwargs: submission.kwargs,
      queue,
      tags: submission.tags,
      timestamp: new Date(),
    });
    return { taskId, queue };
  }

  waitForResult(taskId: string, seconds: number): Promise<TaskResult> {
    return this.results.waitForReady(taskId, { timeoutMs: seconds * 1000, intervalMs: 50 });
  }

  /**
   * Broadcasts `revoke` (workers skip the task, or abort it with `terminate`) and records
   * REVOKED for a task that has not finished, as Celery's own backend would once a worker sees it.
   */
  async revoke(entry: TaskLogEntry, terminate: boolean): Promise<TaskResult> {
    await this.control.revoke(entry.task_id, { terminate, signal: 'SIGTERM' });
    const current = await this.results.get(entry.task_id);
    if (READY_STATES.has(current.status)) return current;
    const meta: RequestMeta = { name: entry.task_name, args: entry.args, kwargs: entry.kwargs, worker: null, retries: 0, queue: entry.queue };
    await this.results.markRevoked(entry.task_id, terminate ? 'terminated' : 'revoked', meta);
    return this.results.get(entry.task_id);
  }

  /** States of several tasks at once (PENDING when no result document exists). */
  async states(taskIds: string[]): Promise<Map<string, TaskState>> {
    const states = new Map<string, TaskState>(taskIds.map((id) => [id, 'PENDING']));
    const rows = await this.results.collection.find({ _id: { $in: taskIds } }, { projection: { status: 1 } }).toArray();
    for (const row of rows) states.set(String(row._id), row.status as TaskState);
    return states;
  }

  /** The caller's history, newest first, optionally only runs in one state, paged. */
  async history(
    filter: HistoryFilter,
    status: TaskState | undefined,
    paging: PageRequest,
  ): Promise<{ total: number; window: PageWindow; entries: { entry: TaskLogEntry; status: TaskState }[] }> {
    if (status === undefined) {
      const total = await this.log.count(filter);
      const window = pageWindow(total, paging);
      const entries = await this.log.page(filter, window.skip, window.limit);
      const states = await this.states(entries.map((e) => e._id));
      return { total, window, entries: entries.map((entry) => ({ entry, status: states.get(entry._id) ?? 'PENDING' })) };
    }
    // The state lives in the result collection: filter the caller's ids by it, then page.
    const ids = await this.log.ids(filter);
    const states = new Map<string, TaskState>();
    for (let i = 0; i < ids.length; i += 1000) {
      for (const [id, s] of await this.states(ids.slice(i, i + 1000))) states.set(id, s);
    }
    const matching = ids.filter((id) => states.get(id) === status);
    const window = pageWindow(matching.length, paging);
    const pageIds = window.limit > 0 ? matching.slice(window.skip, window.skip + window.limit) : matching;
    const byId = new Map((await this.log.byIds(pageIds)).map((e) => [e._id, e]));
    return {
      total: matching.length,
      window,
      entries: pageIds.flatMap((id) => {
        const entry = byId.get(id);
        return entry ? [{ entry, status }] : [];
      }),
    };
  }

  async close(): Promise<void> {
    await this.publisher.close();
    await this.control.close();
    await this.session.close();
  }
}
