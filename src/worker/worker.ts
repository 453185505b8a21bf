/**
 * The TypeScript Celery worker: consumes task queues, runs registered tasks with bounded
 * concurrency, stores Celery-format results, answers remote control and sends events.
 *
 * Lifecycle: `run()` resolves once the worker consumes (it waits for the database and the
 * broker, retrying); `close()` stops taking tasks, lets running ones finish within the grace
 * period and hands the rest back to the broker. Broker and database restarts are survived:
 * the broker session reconnects and re-attaches everything, result writes are retried.
 *
 * Delivery guarantees (late ack): a message is acknowledged only after its outcome is stored,
 * so a worker that dies mid-task leaves the message to the broker, which redelivers it.
 */
import { EventEmitter } from 'node:events';
import type { Channel, ChannelModel, ConfirmChannel } from 'amqplib';
import pTimeout from 'p-timeout';
import type { MongoClient } from 'mongodb';
import { pino, type Logger } from 'pino';
import type { BrokerSettings, MongoSettings } from '../config/connections.js';
import { connectMongo } from '../db/mongo-client.js';
import { BrokerSession } from '../queue/connection/broker-session.js';
import { BROKER_CLOSE_TIMEOUT_MS, closeChannel } from '../queue/connection/bounded-close.js';
import { ControlClient } from '../queue/remote-control/control-client.js';
import { TaskPublisher, type PublishTaskInput } from '../queue/publishing/task-publisher.js';
import { DEFAULT_QUEUE, declareEventExchange } from '../queue/protocol/entities.js';
import { AUTHENTICATED_USER_HEADER as AUTHENTICATED_USER, type HeaderValue } from '../queue/protocol/task-message.js';
import { HEARTBEAT_INTERVAL_S } from '../queue/protocol/events.js';
import { toJsonValue } from '../queue/protocol/python-json.js';
import { pythonRepr } from '../queue/protocol/python-repr.js';
import type { IncomingTask } from '../queue/protocol/task-message-parser.js';
import { formatCeleryTimestamp } from '../queue/protocol/timestamps.js';
import {
  NotRegistered,
  PythonException,
  TaskRevokedError,
  exceptionRepr,
  formatTraceback,
  toExceptionInfo,
  type CeleryExceptionInfo,
} from '../queue/results/exceptions.js';
import { DEAD_LETTER_QUEUE, parkMessage } from '../queue/dead-letter/dead-letter-queue.js';
import type { RequestMeta } from '../queue/results/result-document.js';
import type { DeliveryCount, ResultStore } from '../queue/results/result-store.js';
import type { TaskState } from '../queue/results/states.js';
import type { ControlTarget } from './control-commands.js';
import { ControlMailbox } from './control-mailbox.js';
import { DataStore } from './data-store.js';
import { SUBMITTER_ACCESS_HEADER, decodeSubmitterAccess } from '../queue/protocol/submitter-access.js';
import { InvalidSignatureError, chainTaskIds, parseSignatureList, popChain, signatureMessages, type ApplyContext } from './canvas.js';
import { chordUnlockTask } from './chord-unlock.js';
import { requestRetry, type Retry } from './task-retry.js';
import { EventDispatcher } from './event-dispatcher.js';
import { requestInfo, workerStats } from './inspection.js';
import { abortable, retrying, sharedAbortController, sleep } from './retry.js';
import { RevokedSet } from './revoked-set.js';
import type { TaskDefinition } from './task-definition.js';
import { TaskExecution, WorkerShutdown, type TaskOutcome } from './task-execution.js';
import { TaskRegistry } from './task-registry.js';
import type { Settlement } from './acknowledgements.js';
import { startConsuming, type TaskConsumer } from './consumer.js';
import { OutcomeRecorder, type StoredAs } from './outcome-recorder.js';
import { GroupedResultStore } from './outcome-store.js';
import { Pool } from './pool.js';
import { receiveMessage } from './strategy.js';
import { TaskRequest, type Delivery } from './task-request.js';

export interface WorkerOptions {
  nodeName: string;
  queues: string[];
  tasks: Iterable<TaskDefinition>;
  broker: BrokerSettings;
  mongo: MongoSettings;
  resultDatabase: string;
  resultCollection: string;
  /** Tasks running at the same time (default 1). */
  concurrency?: number;
  /**
   * Unacknowledged messages = concurrency × this, plus one per task whose result is being written
   * (see prefetch-window.ts); 0 = unlimited (default 4).
   */
  prefetchMultiplier?: number;
  /** Store STARTED before a task runs (default false, as Celery's task_track_started). */
  trackStarted?: boolean;
  /** Send task events from the start (default false; `enable_events` turns them on). */
  sendTaskEvents?: boolean;
  /** How long close() lets running tasks finish (default 30 s). */
  shutdownGraceMs?: number;
  /** Hard time limit for tasks without their own (seconds; null = none). */
  defaultTimeLimitSeconds?: number | null;
  /** Ask peers for their revoked ids at start-up, like Celery's mingle (default true). */
  mingle?: boolean;
  /** How long to keep retrying a result write before handing the message back (default 60 s). */
  resultWriteDeadlineMs?: number;
  /**
   * Starts of one task message (per task id and retry, counted by all workers together) after
   * which it is no longer run but parked in the dead-letter queue (default 5).
   */
  maxDeliveries?: number;
  /** Queue for canvas steps (callbacks, chain steps, errbacks) whose signature names none (default `celery`). */
  defaultQueue?: string;
  logger?: Logger;
}

/** What happened to one task message, for listeners and tests. */
export interface TaskReport {
  taskId: string;
  taskName: string;
  state: TaskState | 'NOT_REGISTERED' | 'REJECTED' | 'REQUEUED' | 'DEAD_LETTERED' | 'ALREADY_FINISHED';
  runtimeMs: number;
}

export interface WorkerEvents {
  /** Consuming (again) after connecting to the broker. */
  ready: [];
  'broker-disconnected': [];
  'task-finished': [report: TaskReport];
  closed: [];
}

/** A request from the moment it takes a slot until its message is settled. */
interface RunningTask {
  request: TaskRequest;
  execution: TaskExecution;
  startedAt: Date;
}

type Lifecycle = 'new' | 'starting' | 'running' | 'closing' | 'closed';

export class Worker extends EventEmitter<WorkerEvents> {
  readonly nodeName: string;
  readonly queues: readonly string[];
  readonly registry: TaskRegistry;

  private readonly logger: Logger;
  private readonly session: BrokerSession;
  private readonly events: EventDispatcher;
  private readonly mailbox: ControlMailbox;
  private readonly revoked = new RevokedSet();
  private readonly running = new Map<string, RunningTask>();
  /** Resolved (and emptied) when the last running task ends: what a shutdown waits on. */
  private readonly idleWaiters: (() => void)[] = [];
  private readonly pool: Pool<TaskRequest>;
  private readonly scheduled = new Map<NodeJS.Timeout, TaskRequest>();
  private readonly processed = new Map<string, number>();
  private readonly closeSignal = new AbortController();
  /** Fires when close()'s grace period runs out: result writes still retrying give up then. */
  private readonly graceOver = sharedAbortController();
  private readonly concurrency: number;
  private readonly prefetchCount: number;
  private readonly trackStarted: boolean;
  private readonly shutdownGraceMs: number;
  private readonly defaultTimeLimitSeconds: number | null;
  private readonly resultWriteDeadlineMs: number;
  private readonly maxDeliveries: number;
  private readonly mingle: boolean;
  private readonly defaultQueue: string;
  /** Sends retries and canvas steps, each confirmed by the broker before the message is acknowledged. */
  private readonly publisher: TaskPublisher;
  /** Celery's built-in tasks this worker runs; not listed by `registered`, like Celery's own. */
  private readonly builtins: Map<string, TaskDefinition>;

  private lifecycle: Lifecycle = 'new';
  private mongo: MongoClient | null = null;
  private results: GroupedResultStore | null = null;
  private dataStore: DataStore | null = null;
  private taskChannel: TaskConsumer | null = null;
  private readonly recorder: OutcomeRecorder;
  private heartbeat: NodeJS.Timeout | null = null;
  private clockValue = 0;
  private announcedOnline = false;
  private closing: Promise<void> | null = null;

  constructor(private readonly options: WorkerOptions) {
    super();
    this.nodeName = options.nodeName;
    this.queues = [...options.queues];
    this.registry = new TaskRegistry(options.tasks);
    this.logger = options.logger ?? pino({ level: 'info' });
    this.concurrency = Math.max(1, options.concurrency ?? 1);
    const multiplier = options.prefetchMultiplier ?? 4;
    this.prefetchCount = multiplier === 0 ? 0 : this.concurrency * multiplier;
    this.trackStarted = options.trackStarted ?? false;
    this.shutdownGraceMs = options.shutdownGraceMs ?? 30_000;
    this.defaultTimeLimitSeconds = options.defaultTimeLimitSeconds ?? null;
    this.resultWriteDeadlineMs = options.resultWriteDeadlineMs ?? 60_000;
    this.maxDeliveries = Math.max(1, options.maxDeliveries ?? 5);
    this.mingle = options.mingle ?? true;
    this.session = new BrokerSession({ settings: options.broker });
    this.defaultQueue = options.defaultQueue ?? DEFAULT_QUEUE;
    this.publisher = new TaskPublisher({ session: this.session });
    const chordUnlock = chordUnlockTask({
      results: () => this.requireResults(),
      publish: (messages) => this.publishAll(messages),
      defaultQueue: this.defaultQueue,
    });
    this.builtins = new Map([[chordUnlock.name, chordUnlock]]);
    this.events = new EventDispatcher(this.nodeName, () => this.tick(), { taskEvents: options.sendTaskEvents ?? false });
    this.mailbox = new ControlMailbox(this.controlTarget(), this.logger.child({ component: 'control' }));
    this.pool = new Pool(this.concurrency, (request, release) => void this.execute(request, release));
    this.recorder = new OutcomeRecorder({
      store: () => this.results,
      logger: this.logger,
      graceOver: this.graceOver.signal,
      deadlineMs: () => (this.lifecycle === 'closing' ? Math.min(this.resultWriteDeadlineMs, 5_000) : this.resultWriteDeadlineMs),
    });
  }

  /** The broker node connected to (its address from BROKER_URL), or null while disconnected. */
  get brokerAddress(): string | null {
    return this.session.address;
  }

  /** Tasks running right now. */
  get activeCount(): number {
    return this.running.size;
  }

  /** Connects (retrying until both services answer) and starts consuming. */
  async run(): Promise<void> {
    if (this.lifecycle !== 'new') throw new Error(`Worker.run() called when ${this.lifecycle}`);
    this.lifecycle = 'starting';
    this.logger.info(
      { node: this.nodeName, queues: this.queues, concurrency: this.concurrency, tasks: this.registry.names },
      'worker starting',
    );
    try {
      await this.connectDatabase();
    } catch (error) {
      if (this.closeSignal.signal.aborted) return; // closed while waiting for the database
      throw error;
    }
    if (this.closeSignal.signal.aborted) return;

    const ready = new Promise<void>((resolve) => this.once('ready', resolve));
    this.session.on('connected', (connection) => void this.attach(connection));
    this.session.on('disconnected', (error) => this.detach(error));
    this.session.on('retrying', (error, delayMs) =>
      this.logger.warn({ err: error.message, retryInMs: delayMs }, 'broker not reachable, retrying'),
    );
    this.session.start();
    await Promise.race([ready, new Promise<void>((resolve) => this.closeSignal.signal.addEventListener('abort', () => resolve()))]);
  }

  /**
   * Graceful stop: no new tasks; prefetched ones go back to the queue; running ones get
   * `graceMs` to finish, after which they are abandoned unacknowledged (the broker redelivers).
   */
  close(graceMs = this.shutdownGraceMs): Promise<void> {
    this.closing ??= this.shutdown(graceMs);
    return this.closing;
  }

  // ---------------------------------------------------------------- connections

  private async connectDatabase(): Promise<void> {
    this.mongo = await retrying(() => connectMongo(this.options.mongo), {
      deadlineMs: Number.POSITIVE_INFINITY,
      initialDelayMs: 500,
      maxDelayMs: 10_000,
      signal: this.closeSignal.signal,
      onRetry: (error, attempt, delayMs) =>
        this.logger.warn({ err: (error as Error).message, attempt, retryInMs: delayMs }, 'database not reachable, retrying'),
    });
    this.results = new GroupedResultStore(this.mongo, { database: this.options.resultDatabase, collection: this.options.resultCollection });
    // The installer keeps results in the service's database, beside the users and groups.
    this.dataStore = new DataStore(this.mongo, this.options.resultDatabase);
  }

  /** (Re)creates channels, consumers, mailbox and event channel on a fresh connection. */
  private async attach(connection: ChannelModel): Promise<void> {
    if (this.lifecycle === 'closing' || this.lifecycle === 'closed') return;
    try {
      const eventChannel = await this.openChannel(connection, true);
      await declareEventExchange(eventChannel);
      this.events.attach(eventChannel);

      const controlChannel = await this.openChannel(connection);
      await this.mailbox.attach(controlChannel);

      const channel = await this.openChannel(connection);
      this.taskChannel = await startConsuming(channel, {
        queues: this.queues,
        prefetchCount: this.prefetchCount,
        queueType: this.options.broker.queueType,
        onMessage: (message, acks, window) => this.onDelivery({ message, acks, window }),
      });
    } catch (error) {
      // Typically a declaration clash (406). Start over on a new connection after a pause.
      this.logger.error({ err: error }, 'could not set up consumers; reconnecting');
      await connection.close().catch(() => undefined);
      return;
    }

    if (this.mingle && !this.announcedOnline) await this.syncRevokedWithPeers();
    this.startHeartbeat();
    this.logger.info({ node: this.nodeName, queues: this.queues, broker: this.session.address }, 'worker ready');
    this.lifecycle = this.lifecycle === 'starting' ? 'running' : this.lifecycle;
    this.emit('ready');
  }

  private async openChannel(connection: ChannelModel, confirm: true): Promise<ConfirmChannel>;
  private async openChannel(connection: ChannelModel): Promise<Channel>;
  private async openChannel(connection: ChannelModel, confirm = false): Promise<Channel> {
    const channel = confirm ? await connection.createConfirmChannel() : await connection.createChannel();
    channel.on('error', (error: Error) => this.logger.warn({ err: error.message }, 'broker channel error'));
    channel.once('close', () => {
      // A channel closed by the broker while the connection lives: rebuild everything cleanly.
      if (this.session.connection === connection && this.lifecycle !== 'closing' && this.lifecycle !== 'closed') {
        this.logger.warn('broker closed a channel; reconnecting');
        void connection.close().catch(() => undefined);
      }
    });
    return channel;
  }

  private detach(error: Error | undefined): void {
    this.logger.warn({ err: error?.message }, 'broker connection lost');
    this.events.attach(null);
    this.stopHeartbeat();
    this.taskChannel?.acks.close();
    this.taskChannel?.window.close();
    this.taskChannel = null;
    // Unacknowledged messages return to the queue with the connection: forget our copies.
    this.pool.takeWaiting();
    for (const timer of this.scheduled.keys()) clearTimeout(timer);
    this.scheduled.clear();
    this.emit('broker-disconnected');
  }

  /** Celery's mingle: ask the other workers for the ids they know are revoked. */
  private async syncRevokedWithPeers(): Promise<void> {
    const client = new ControlClient({ session: this.session });
    try {
      const replies = await client.broadcast('hello', { from_node: this.nodeName, revoked: {} }, { timeoutMs: 1_000 });
      for (const [node, reply] of Object.entries(replies)) {
        if (node !== this.nodeName && reply !== null && typeof reply === 'object' && !Array.isArray(reply)) {
          this.revoked.mergeHelloPayload(reply.revoked);
        }
      }
    } catch (error) {
      this.logger.warn({ err: (error as Error).message }, 'mingle failed; continuing without peers\u2019 revoked ids');
    } finally {
      await client.close();
    }
  }

  private startHeartbeat(): void {
    this.stopHeartbeat();
    if (!this.announcedOnline) {
      this.events.sendWorkerEvent('worker-online', this.status());
      this.announcedOnline = true;
    }
    this.heartbeat = setInterval(() => this.events.sendWorkerEvent('worker-heartbeat', this.status()), HEARTBEAT_INTERVAL_S * 1000);
  }

  private stopHeartbeat(): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = null;
  }

  // ---------------------------------------------------------------- receiving

  private onDelivery(delivery: Delivery): void {
    void this.receive(delivery).catch((error: unknown) => {
      this.logger.error({ err: error }, 'unexpected error handling a message; returning it to the queue');
      delivery.acks.settle(delivery.message, 'requeue');
    });
  }

  private async receive(delivery: Delivery): Promise<void> {
    const { message, acks } = delivery;
    if (this.lifecycle === 'closing' || this.lifecycle === 'closed') {
      acks.settle(message, 'requeue');
      return;
    }
    const received = receiveMessage(message, (name) => this.registry.get(name) ?? this.builtins.get(name));
    if (received.kind === 'invalid') {
      // Celery drops such messages (reject, no requeue) so they cannot loop.
      const { reason, detail, taskId } = received;
      this.logger.error({ reason, detail, taskId }, 'refusing invalid task message');
      acks.settle(message, 'reject');
      this.report(received.taskId ?? '', received.taskName ?? '', 'REJECTED', 0);
      return;
    }
    if (received.kind === 'unregistered') {
      await this.refuseUnregistered(delivery, received.task);
      return;
    }
    const { task } = received;
    const runningCopy = this.running.get(task.taskId);
    // A retry (same id, higher retries) is a new message, not a copy of the running one.
    if (runningCopy !== undefined && runningCopy.request.isCopyOf(task)) {
      // A redelivery of a task still running here (we reconnected): settle it with the original.
      runningCopy.request.addDuplicate(delivery);
      return;
    }
    const request = new TaskRequest(delivery, task, received.definition);
    if (await this.dropIfRevokedOrExpired(request)) return;

    if (this.events.taskEventsEnabled)
      this.events.sendTaskEvent('task-received', {
        uuid: task.taskId,
        name: task.taskName,
        args: task.argsrepr ?? pythonRepr(task.args),
        kwargs: task.kwargsrepr ?? pythonRepr(task.kwargs),
        root_id: task.rootId,
        parent_id: task.parentId,
        retries: task.retries,
        eta: task.eta ? formatCeleryTimestamp(task.eta) : null,
        expires: task.expires ? formatCeleryTimestamp(task.expires) : null,
      });

    const delayMs = task.eta ? task.eta.getTime() - Date.now() : 0;
    if (delayMs > 0) this.schedule(request, delayMs);
    else {
      // Asked now, with the other messages of this delivery burst in one read, so the answer is
      // there when a slot frees up. A revoke the API records after this read reaches this
      // worker by its broadcast (the worker is consuming, so its mailbox is attached).
      if (this.checksFinalStateOnly(request)) request.finalStateRead = this.readFinalState(request);
      this.pool.submit(request);
    }
  }

  /**
   * A first delivery is not counted as a start before it runs (see `startCount`): it only needs
   * to know whether the task already has a final state. With track_started it writes STARTED
   * all the same, in the counting write.
   */
  private checksFinalStateOnly(request: TaskRequest): boolean {
    return request.firstDelivery && !this.marksStarted(request);
  }

  private marksStarted(request: TaskRequest): boolean {
    return this.trackStarted && !(request.definition.ignoreResult || request.task.ignoreResult);
  }

  private readFinalState(request: TaskRequest): Promise<TaskState | null> {
    const store = this.results;
    if (store === null) return Promise.resolve(null);
    const read = store.finalState(request.taskId);
    // Asked ahead of time: a failure must not go unhandled if the request never starts.
    read.catch(() => undefined);
    return read;
  }

  /** Unknown task: FAILURE(NotRegistered) stored and the message rejected, as Celery does. */
  private async refuseUnregistered(delivery: Delivery, task: IncomingTask): Promise<void> {
    this.logger.error({ task: task.taskName, taskId: task.taskId }, 'received unregistered task; rejecting');
    const exception = toExceptionInfo(new NotRegistered(task.taskName));
    await this.recorder
      .write(task.taskId, (store) => store.markFailure(task.taskId, exception, null, this.requestMeta(task)))
      .catch((error: unknown) => this.logger.error({ err: error, taskId: task.taskId }, 'could not store NotRegistered failure'));
    this.events.sendTaskEvent('task-failed', { uuid: task.taskId, exception: exceptionRepr(exception), traceback: null });
    delivery.acks.settle(delivery.message, 'reject');
    this.report(task.taskId, task.taskName, 'NOT_REGISTERED', 0);
  }

  /** Revoked or expired: REVOKED stored, message acknowledged. */
  private async dropIfRevokedOrExpired(request: TaskRequest): Promise<boolean> {
    const { task } = request;
    const expired = task.expires !== null && task.expires.getTime() <= Date.now();
    if (!expired && !this.revoked.has(task.taskId)) return false;
    const reason = expired ? 'expired' : 'revoked';
    this.logger.info({ taskId: task.taskId, task: task.taskName, reason }, 'discarding revoked task');
    try {
      const meta = this.requestMeta(task);
      await this.recorder.writeFinal(
        task,
        meta,
        (store, m) => store.markRevoked(task.taskId, reason, m),
        () => ['revocation', exceptionRepr(toExceptionInfo(new TaskRevokedError(reason)))],
      );
    } catch (error) {
      this.logger.error({ err: error, taskId: task.taskId }, 'could not store REVOKED; returning the message');
      request.settle('requeue');
      return true;
    }
    this.events.sendTaskEvent('task-revoked', { uuid: task.taskId, terminated: false, signum: null, expired });
    request.settle('ack');
    this.report(task.taskId, task.taskName, 'REVOKED', 0);
    return true;
  }

  /**
   * Holds an ETA task (unacknowledged, like Celery) until it is due, with room beside the
   * prefetch window meanwhile (see prefetch-window.ts).
   */
  private schedule(request: TaskRequest, delayMs: number): void {
    request.holdForEta();
    // setTimeout overflows past ~24.8 days; wake up and re-check instead.
    const timer = setTimeout(
      () => {
        this.scheduled.delete(timer);
        const remaining = (request.task.eta?.getTime() ?? 0) - Date.now();
        if (remaining > 0) this.schedule(request, remaining);
        else {
          request.releaseHold();
          this.pool.submit(request);
        }
      },
      Math.min(delayMs, 2 ** 31 - 1),
    );
    this.scheduled.set(timer, request);
  }

  // ---------------------------------------------------------------- executing

  /**
   * Runs a request in the pool slot it was given. The slot is released as soon as the body is
   * done, so the next task runs while this one's outcome is written; the request stays among the
   * running ones (what revoke, inspect and shutdown see) until its message is settled.
   */
  private async execute(request: TaskRequest, release: () => void): Promise<void> {
    const { task, definition } = request;
    const runningCopy = this.running.get(task.taskId);
    if (runningCopy !== undefined) {
      release();
      if (runningCopy.request.isCopyOf(task)) runningCopy.request.addDuplicate(request.delivery);
      // The retry of a task whose previous run is still being recorded: wait for it to finish.
      else this.schedule(request, 50);
      return;
    }
    const execution = new TaskExecution();
    const entry: RunningTask = { request, execution, startedAt: new Date() };
    this.running.set(task.taskId, entry);
    try {
      // Revoked or expired while it waited for a free slot?
      if (await this.dropIfRevokedOrExpired(request)) return;
      if (await this.dropIfAlreadyFinished(request)) return;
      const meta = this.requestMeta(task);
      const storesResults = !(definition.ignoreResult || task.ignoreResult);
      const counted = await this.startCount(request, meta);
      if (this.graceOver.signal.aborted) {
        // Shut down while counting: not started, so back to the queue without running.
        request.settle('requeue');
        this.report(task.taskId, task.taskName, 'REQUEUED', 0);
        return;
      }
      if (counted?.finalState != null) {
        this.discardFinished(request, counted.finalState);
        return;
      }
      const starts = counted?.count ?? null;
      if (starts !== null && starts > this.maxDeliveries) {
        await this.park(request, starts, meta);
        return;
      }
      this.events.sendTaskEvent('task-started', { uuid: task.taskId });

      let outcome: TaskOutcome;
      try {
        outcome = await execution.run(
          definition,
          {
            taskId: task.taskId,
            taskName: task.taskName,
            authenticatedUser: task.authenticatedUser,
            args: task.args,
            kwargs: task.kwargs,
            headers: task.customHeaders,
            retries: task.retries,
            rootId: task.rootId,
            parentId: task.parentId,
            retry: (options) => requestRetry(task, definition, options),
            hostname: this.nodeName,
            dataStore: this.requireDataStore().forTask(decodeSubmitterAccess(task.customHeaders, task.authenticatedUser)),
            logger: this.logger.child({ task: task.taskName, taskId: task.taskId }),
          },
          this.timeLimits(request),
        );
      } finally {
        release();
      }
      // Done running, not yet acknowledged: its message gets room beside the prefetch window
      // until it is settled, so the tasks behind it are not held back by its result write.
      request.startRecording();
      try {
        await this.finish(request, outcome, meta, storesResults);
      } finally {
        request.stopRecording();
      }
    } finally {
      release();
      this.running.delete(task.taskId);
      if (this.running.size === 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
    }
  }

  /**
   * A redelivered message of a task that already has its final state: the worker that ran it
   * lost its broker connection (e.g. the node died) before its acknowledgement got through.
   * Acknowledged without running again. A redelivery of a task still running elsewhere cannot
   * be told apart from one whose worker died, and runs again (at-least-once).
   */
  private async dropIfAlreadyFinished(request: TaskRequest): Promise<boolean> {
    const { task, message } = request;
    const store = this.results;
    if (!message.fields.redelivered || store === null) return false;
    const finished = await store.isReady(task.taskId).catch(() => false);
    if (!finished) return false;
    this.logger.info(
      { taskId: task.taskId, task: task.taskName },
      'redelivered task already finished; acknowledging without running it again',
    );
    request.settle('ack');
    this.report(task.taskId, task.taskName, 'ALREADY_FINISHED', 0);
    return true;
  }

  /**
   * Counts this start of the task where every worker sees it (and stores STARTED with it when
   * asked). Counting is what stops a message that keeps killing or stalling its workers; when
   * the count cannot be written the task runs uncounted (null), as it did before counting.
   */
  /**
   * A task whose result already holds a final state when it is about to start: revoked by the
   * API before any worker heard the revoke (its submitter was deactivated or lost a grant while
   * it waited, with no worker online to hear the broadcast), or finished elsewhere. Acknowledged
   * without running, the state left as it is.
   */
  private discardFinished(request: TaskRequest, state: TaskState): void {
    const { task } = request;
    const revoked = state === 'REVOKED';
    this.logger.info({ taskId: task.taskId, task: task.taskName, state }, 'task already has a final state; not running it');
    if (revoked) this.events.sendTaskEvent('task-revoked', { uuid: task.taskId, terminated: false, signum: null, expired: false });
    request.settle('ack');
    this.report(task.taskId, task.taskName, revoked ? 'REVOKED' : 'ALREADY_FINISHED', 0);
  }

  /**
   * The starts of this message so far, this one included, or null when they could not be known
   * (the task then runs uncounted, as it did before counting); or the final state the task
   * already has.
   *
   * Only redeliveries are written down before they run: a message the broker delivers for the
   * first time (`redelivered` false) has had no start anywhere, so its count is known without a
   * write, and a database round trip before every task body is what bounded a worker at
   * concurrency 1. A redelivered message counts its earlier first delivery as a start: one that
   * went back unstarted (prefetched when its worker stopped) is counted one start too many, at
   * most once, which a task that finishes never notices.
   */
  private async startCount(request: TaskRequest, meta: RequestMeta): Promise<DeliveryCount | null> {
    const { task } = request;
    if (this.checksFinalStateOnly(request)) {
      request.finalStateRead ??= this.readFinalState(request);
      try {
        const finalState = await abortable(request.finalStateRead, this.graceOver.signal);
        return finalState === null ? { count: 1, finalState: null } : { count: null, finalState };
      } catch (error) {
        this.logger.warn(
          { err: (error as Error).message, taskId: task.taskId },
          'could not read whether the task already finished; running it',
        );
        return null;
      }
    }
    const store = this.results;
    if (store === null) return null;
    const started = this.marksStarted(request) ? { pid: process.pid, hostname: this.nodeName } : undefined;
    // A first delivery (with track_started) writes STARTED but adds nothing to the count.
    const increment = request.firstDelivery ? 0 : 1;
    try {
      const counted = await abortable(store.countDelivery(task.taskId, task.retries, meta, started, increment), this.graceOver.signal);
      return counted.count === null ? counted : { count: counted.count + 1, finalState: null };
    } catch (error) {
      this.logger.warn(
        { err: (error as Error).message, taskId: task.taskId },
        'could not count the start of the task; running it uncounted',
      );
      return null;
    }
  }

  /**
   * A message started too often without finishing: copied unchanged into the dead-letter queue
   * (after the broker's confirm), recorded as a FAILURE, and acknowledged, so it stops running.
   * When the copy cannot be made the message goes back to its queue to be tried again.
   */
  private async park(request: TaskRequest, starts: number, meta: RequestMeta): Promise<void> {
    const { task, message } = request;
    const log = this.logger.child({ taskId: task.taskId, task: task.taskName });
    const reason = `delivered ${starts} times without finishing; parked in ${DEAD_LETTER_QUEUE}`;
    try {
      const connection = this.session.connection;
      if (connection === null) throw new Error('not connected to the broker');
      const channel = await connection.createConfirmChannel();
      channel.on('error', (error: Error) => log.warn({ err: error.message }, 'dead-letter channel error'));
      try {
        await parkMessage(channel, message, { reason, deliveryCount: starts, queueType: this.options.broker.queueType });
      } finally {
        await closeChannel(channel);
      }
    } catch (error) {
      log.error({ err: error }, 'could not park the message in the dead-letter queue; returning it to its queue');
      request.settle('requeue');
      this.report(task.taskId, task.taskName, 'REQUEUED', 0);
      return;
    }
    log.error({ starts, maxDeliveries: this.maxDeliveries }, `task ${reason}`);
    const exception = toExceptionInfo(new PythonException('WorkerLostError', [reason], 'billiard.exceptions'));
    try {
      await this.recorder.writeFinal(
        task,
        meta,
        (store, m) => store.markFailure(task.taskId, exception, null, m),
        () => ['exception', exceptionRepr(exception)],
      );
    } catch (error) {
      // The message is safe in the dead-letter queue; running it again is what must not happen.
      log.error({ err: error }, 'could not store the FAILURE of a parked task');
    }
    this.events.sendTaskEvent('task-failed', { uuid: task.taskId, exception: exceptionRepr(exception), traceback: null });
    request.settle('ack');
    this.report(task.taskId, task.taskName, 'DEAD_LETTERED', 0);
  }

  private timeLimits(request: TaskRequest): { hardSeconds: number | null; softSeconds: number | null } {
    // The message's limits win over the task's, as in Celery.
    const { task, definition } = request;
    return {
      hardSeconds: task.timeLimit.hard ?? definition.timeLimitSeconds ?? this.defaultTimeLimitSeconds,
      softSeconds: task.timeLimit.soft ?? definition.softTimeLimitSeconds,
    };
  }

  private async finish(request: TaskRequest, outcome: TaskOutcome, meta: RequestMeta, storesResults: boolean): Promise<void> {
    const { task } = request;
    const settleAll = (how: Settlement): void => void request.settle(how);
    // Bound lazily: a child logger per task costs more than a no-op task on a busy worker.
    let child: Logger | null = null;
    const log = (): Logger => (child ??= this.logger.child({ taskId: task.taskId, task: task.taskName }));

    if (outcome.state === 'ABANDONED') {
      log().warn('task abandoned at shutdown; returning it to the queue');
      settleAll('requeue');
      this.report(task.taskId, task.taskName, 'REQUEUED', outcome.runtimeMs);
      return;
    }

    if (outcome.state === 'RETRY') {
      await this.retryLater(request, outcome.retry, meta, storesResults, outcome.runtimeMs);
      return;
    }
    if (outcome.state === 'SUCCESS') {
      // Like Celery, the next steps are sent before the result is stored, so a reader that
      // sees SUCCESS can already find them. Not sent (broker down): the task runs again.
      try {
        await this.publishAll(this.successSteps(task, outcome.value));
      } catch (error) {
        if (!(error instanceof InvalidSignatureError)) {
          log().error({ err: error }, 'could not send the callbacks or next chain step; returning the message so it runs again');
          settleAll('requeue');
          this.report(task.taskId, task.taskName, 'REQUEUED', outcome.runtimeMs);
          return;
        }
        log().error({ err: error.message }, 'the task message carries an unusable canvas; the task fails');
        outcome = { state: 'FAILURE', error, exception: toExceptionInfo(error), traceback: '', runtimeMs: outcome.runtimeMs };
      }
    }

    let stored: StoredAs = 'stored';
    try {
      if (outcome.state === 'SUCCESS') {
        // Only the start count was written for a task whose result is not kept: remove it.
        if (!storesResults && !request.firstDelivery) void this.results?.forgetDeliveries(task.taskId).catch(() => undefined);
        if (storesResults) {
          stored = await this.recorder.writeFinal(
            task,
            meta,
            (store, m) => store.markSuccess(task.taskId, outcome.value, m),
            () => ['result', pythonRepr(toJsonValue(outcome.value))],
          );
        }
      } else if (outcome.state === 'FAILURE') {
        stored = await this.recorder.writeFinal(
          task,
          meta,
          (store, m) => store.markFailure(task.taskId, outcome.exception, outcome.traceback, m),
          () => ['exception', exceptionRepr(outcome.exception)],
        );
      } else {
        stored = await this.recorder.writeFinal(
          task,
          meta,
          (store, m) => store.markRevoked(task.taskId, 'terminated', m),
          () => ['revocation', exceptionRepr(toExceptionInfo(new TaskRevokedError('terminated')))],
        );
      }
    } catch (error) {
      log().error({ err: error }, 'could not store the task outcome; returning the message so it runs again');
      settleAll('requeue');
      this.report(task.taskId, task.taskName, 'REQUEUED', outcome.runtimeMs);
      return;
    }

    if (outcome.state === 'FAILURE' || typeof stored === 'object') {
      try {
        await this.afterFailure(
          task,
          typeof stored === 'object' ? stored.replacedBy : outcome.state === 'FAILURE' ? outcome.exception : null,
        );
      } catch (error) {
        log().error({ err: error }, 'could not send the errbacks; returning the message so it runs again');
        settleAll('requeue');
        this.report(task.taskId, task.taskName, 'REQUEUED', outcome.runtimeMs);
        return;
      }
    }

    const runtime = outcome.runtimeMs / 1000;
    if (typeof stored === 'object') {
      // The outcome itself was refused; what was stored instead is a FAILURE saying so.
      this.events.sendTaskEvent('task-failed', { uuid: task.taskId, exception: exceptionRepr(stored.replacedBy), traceback: null });
      settleAll('ack');
      this.processed.set(task.taskName, (this.processed.get(task.taskName) ?? 0) + 1);
      this.report(task.taskId, task.taskName, 'FAILURE', outcome.runtimeMs);
      return;
    }
    if (outcome.state === 'SUCCESS') {
      if (this.logger.isLevelEnabled('info')) log().info({ runtime }, 'task succeeded');
      if (this.events.taskEventsEnabled)
        this.events.sendTaskEvent('task-succeeded', { uuid: task.taskId, result: pythonRepr(toJsonValue(outcome.value)), runtime });
    } else if (outcome.state === 'FAILURE') {
      log().warn({ runtime, exception: exceptionRepr(outcome.exception) }, 'task failed');
      this.events.sendTaskEvent('task-failed', {
        uuid: task.taskId,
        exception: exceptionRepr(outcome.exception),
        traceback: outcome.traceback,
      });
    } else {
      log().info('task terminated by revoke');
      this.events.sendTaskEvent('task-revoked', { uuid: task.taskId, terminated: true, signum: 15, expired: false });
    }
    settleAll('ack');
    this.processed.set(task.taskName, (this.processed.get(task.taskName) ?? 0) + 1);
    this.report(task.taskId, task.taskName, outcome.state, outcome.runtimeMs);
  }

  /**
   * `ctx.retry()`: the same message again (same id, retries + 1, eta), sent before RETRY is
   * stored and the current message acknowledged, as Celery does. Not sent: the message goes
   * back to the queue and the task runs again now.
   */
  private async retryLater(
    request: TaskRequest,
    retry: Retry,
    meta: RequestMeta,
    storesResults: boolean,
    runtimeMs: number,
  ): Promise<void> {
    const { task } = request;
    const log = this.logger.child({ taskId: task.taskId, task: task.taskName });
    const { [AUTHENTICATED_USER]: _user, ...headers } = task.customHeaders;
    try {
      await this.publisher.publish({
        taskName: task.taskName,
        taskId: task.taskId,
        args: retry.nextArgs,
        kwargs: retry.nextKwargs,
        queue: task.deliveryInfo.routingKey || this.defaultQueue,
        authenticatedUser: task.authenticatedUser,
        headers,
        timeLimit: task.timeLimit,
        eta: retry.when,
        expires: task.expires ?? undefined,
        ignoreResult: task.ignoreResult,
        retries: task.retries + 1,
        rootId: task.rootId,
        parentId: task.parentId,
        groupId: task.groupId,
        groupIndex: task.groupIndex,
        shadow: task.shadow,
        priority: task.deliveryInfo.priority ?? undefined,
        embed: task.embed,
      });
    } catch (error) {
      log.error({ err: error }, 'could not send the retry; returning the message so it runs again');
      request.settle('requeue');
      this.report(task.taskId, task.taskName, 'REQUEUED', runtimeMs);
      return;
    }
    const exception = retry.exc === null ? null : toExceptionInfo(retry.exc);
    const traceback = retry.exc === null ? null : formatTraceback(retry.exc);
    if (storesResults) {
      await this.recorder
        .write(task.taskId, (store) => store.markRetry(task.taskId, exception, traceback, meta))
        .catch((error: unknown) =>
          // The retry is on its way; only the intermediate state is missing.
          log.warn({ err: error }, 'could not store RETRY'),
        );
    }
    log.info({ retries: task.retries + 1, eta: retry.when.toISOString() }, 'task retry scheduled');
    this.events.sendTaskEvent('task-retried', {
      uuid: task.taskId,
      exception: exception ? exceptionRepr(exception) : 'Retry()',
      traceback,
    });
    request.settle('ack');
    this.report(task.taskId, task.taskName, 'RETRY', runtimeMs);
  }

  /** Callbacks (the result prepended to their args), then the next chain step carrying the rest. */
  private successSteps(task: IncomingTask, value: unknown): PublishTaskInput[] {
    const base = this.applyContext(task, [toJsonValue(value)]);
    const steps = parseSignatureList(task.embed.callbacks).flatMap((sig) => signatureMessages(sig, base));
    const next = popChain(task.embed.chain);
    if (next !== null) steps.push(...signatureMessages(next.next, { ...base, chain: next.rest }));
    return steps;
  }

  /**
   * After a FAILURE, as Celery's backend does: the chain's remaining steps are stored as failed
   * too (so whoever waits on the last one hears of it), then the errbacks get the failed task's
   * id. Celery runs errbacks that take (request, exc, traceback) inside its own process; that
   * request cannot reach another process, so here every errback is sent as a task, the way
   * Celery sends the errbacks it does not have itself.
   */
  private async afterFailure(task: IncomingTask, exception: CeleryExceptionInfo | null): Promise<void> {
    if (exception !== null) {
      for (const id of chainTaskIds(task.embed.chain)) {
        await this.recorder.write(id, (store) =>
          store.markFailure(id, exception, null, { ...this.requestMeta(task), name: null, args: null, kwargs: null }),
        );
      }
    }
    let errbacks: PublishTaskInput[];
    try {
      errbacks = parseSignatureList(task.embed.errbacks).flatMap((sig) => signatureMessages(sig, this.applyContext(task, [task.taskId])));
    } catch (error) {
      if (!(error instanceof InvalidSignatureError)) throw error;
      this.logger.error({ err: error.message, taskId: task.taskId }, 'unusable errbacks; not sent');
      return;
    }
    await this.publishAll(errbacks);
  }

  private applyContext(task: IncomingTask, args: ApplyContext['args']): ApplyContext {
    const inheritedHeaders: Record<string, HeaderValue> = {};
    const access = task.customHeaders[SUBMITTER_ACCESS_HEADER];
    if (access !== undefined && access !== null) inheritedHeaders[SUBMITTER_ACCESS_HEADER] = access;
    return {
      args,
      parentId: task.taskId,
      rootId: task.rootId ?? task.taskId,
      defaultQueue: this.defaultQueue,
      inheritedHeaders,
      authenticatedUser: task.authenticatedUser,
    };
  }

  private async publishAll(messages: PublishTaskInput[]): Promise<void> {
    for (const message of messages) await this.publisher.publish(message);
  }

  private requireResults(): ResultStore {
    if (this.results === null) throw new Error('result store not connected');
    return this.results;
  }

  private requireDataStore(): DataStore {
    if (this.dataStore === null) throw new Error('data store not connected');
    return this.dataStore;
  }

  private requestMeta(task: IncomingTask): RequestMeta {
    return {
      name: task.taskName,
      args: task.args,
      kwargs: task.kwargs,
      worker: this.nodeName,
      retries: task.retries,
      queue: task.deliveryInfo.routingKey,
      parentId: task.parentId,
      groupId: task.groupId,
    };
  }

  private report(taskId: string, taskName: string, state: TaskReport['state'], runtimeMs: number): void {
    this.emit('task-finished', { taskId, taskName, state, runtimeMs });
  }

  // ---------------------------------------------------------------- shutdown

  private async shutdown(graceMs: number): Promise<void> {
    const wasStarted = this.lifecycle !== 'new';
    this.lifecycle = 'closing';
    this.closeSignal.abort();
    this.logger.info({ running: this.running.size, graceMs }, 'worker shutting down');

    // 1. No new deliveries.
    const consumer = this.taskChannel;
    if (consumer) {
      // Bounded: a broker that stopped answering would hold the reply (and the stop) until the
      // heartbeat gave up; messages that still arrive go back to the queue with the connection.
      const cancels = Promise.all(consumer.consumerTags.map((tag) => consumer.channel.cancel(tag))).catch(() => undefined);
      await pTimeout(cancels, { milliseconds: BROKER_CLOSE_TIMEOUT_MS }).catch(() => undefined);
    }
    // 2. Messages we hold but have not started go back to the queue.
    this.pool.close();
    for (const [timer, request] of this.scheduled) {
      clearTimeout(timer);
      request.settle('requeue');
    }
    this.scheduled.clear();
    for (const request of this.pool.takeWaiting()) request.settle('requeue');

    // 3. Running tasks get the grace period, then are abandoned (unacknowledged → redelivered).
    const drained = this.whenIdle();
    const inTime = await Promise.race([drained.then(() => true), sleep(graceMs).then(() => false)]);
    if (!inTime) {
      this.logger.warn({ running: [...this.running.keys()] }, 'grace period over; abandoning running tasks');
      this.graceOver.abort();
      for (const entry of this.running.values()) entry.execution.stop(new WorkerShutdown());
      await drained;
    }

    // 4. Say goodbye and disconnect (the last acknowledgements first).
    this.taskChannel?.acks.flush();
    this.stopHeartbeat();
    if (wasStarted) {
      this.events.sendWorkerEvent('worker-offline', this.status());
      await this.events.flush();
    }
    // The connection before the publisher: closing it ends the publisher's channels too, so the
    // publisher's close cannot wait on a broker that no longer answers.
    await this.session.close();
    await this.publisher.close();
    await this.mongo?.close().catch(() => undefined);
    this.lifecycle = 'closed';
    this.logger.info('worker stopped');
    this.emit('closed');
  }

  private whenIdle(): Promise<void> {
    if (this.running.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  // ---------------------------------------------------------------- remote control

  private tick(): number {
    this.clockValue += 1;
    return this.clockValue;
  }

  private status(): { active: number; processed: number } {
    let processed = 0;
    for (const count of this.processed.values()) processed += count;
    return { active: this.running.size, processed };
  }

  private controlTarget(): ControlTarget {
    // The accessor pair below needs the worker's dispatcher, not the literal's `this`.
    const events = this.events;
    return {
      nodeName: this.nodeName,
      queues: this.queues,
      queueType: this.options.broker.queueType,
      registeredReply: (items) => this.registry.registeredReply(items),
      taskInfoReply: () => this.registry.taskInfoReply(),
      revoke: (ids, terminate) => {
        for (const id of ids) this.revoked.add(id);
        this.logger.info({ ids, terminate }, 'tasks revoked');
        if (!terminate) return [];
        const stopped: string[] = [];
        for (const id of ids) {
          const entry = this.running.get(id);
          if (entry === undefined) continue;
          entry.execution.stop(new TaskRevokedError('terminated'));
          stopped.push(id);
        }
        return stopped;
      },
      revokedIds: () => this.revoked.ids(),
      helloPayload: () => this.revoked.toHelloPayload(),
      mergeRevoked: (payload) => this.revoked.mergeHelloPayload(payload),
      activeRequests: () => [...this.running.values()].map((entry) => requestInfo(entry.request.task, entry.startedAt, this.nodeName)),
      stats: () =>
        workerStats({
          processedByTask: this.processed,
          clock: this.clockValue,
          concurrency: this.concurrency,
          prefetchCount: this.prefetchCount,
          defaultTimeLimitSeconds: this.defaultTimeLimitSeconds,
          broker: this.options.broker,
          brokerConnected: this.session.connected,
        }),
      sendHeartbeat: () => this.events.sendWorkerEvent('worker-heartbeat', this.status()),
      get taskEventsEnabled() {
        return events.taskEventsEnabled;
      },
      set taskEventsEnabled(value: boolean) {
        events.taskEventsEnabled = value;
      },
      clock: () => this.tick(),
      adjustClock: (peer) => {
        if (peer > 0) this.clockValue = Math.max(this.clockValue, peer) + 1;
      },
    };
  }
}
