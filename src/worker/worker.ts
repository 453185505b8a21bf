/**
 * The TypeScript Celery worker: consumes task queues, runs registered tasks with bounded
 * concurrency, stores Celery-format results, answers remote control and sends events.
 *
 * This class wires the parts together, along Celery's lines: the consumer (consumer/) hands
 * each delivery to the strategy (strategy.ts), which makes a request (request/task-request.ts)
 * and holds it until its ETA (eta-schedule.ts) or gives it to the pool (pool.ts); the runner
 * (request/task-runner.ts) runs it after the start checks (request/start-checks.ts), and the
 * outcome flow (request/request-outcomes.ts) records the outcome and settles the message. Mingle
 * and heart are in consumer/; remote control sees the worker through control-target.ts.
 *
 * Lifecycle: `run()` starts the steps (stepList) in order and resolves once the worker consumes;
 * `close()` stops them in reverse. Broker and database restarts are survived: the broker session
 * reconnects and re-attaches everything, result writes are retried.
 *
 * Delivery guarantees (late ack): a message is acknowledged only after its outcome is stored,
 * so a worker that dies mid-task leaves the message to the broker, which redelivers it.
 */
import { EventEmitter } from 'node:events';
import type { ChannelModel } from 'amqplib';
import type { MongoClient } from 'mongodb';
import { pino, type Logger } from 'pino';
import type { BrokerSession } from '../queue/connection/broker-session.js';
import type { ResultStore } from '../queue/results/result-store.js';
import { chordUnlockTask } from './chord-unlock.js';
import { Consumer } from './consumer/consumer.js';
import { ControlMailbox } from './consumer/control-mailbox.js';
import { LogicalClock, controlTarget } from './control-target.js';
import { DataStore } from './data-store.js';
import { EtaSchedule } from './eta-schedule.js';
import { EventDispatcher } from './consumer/event-dispatcher.js';
import { Heart } from './consumer/heart.js';
import { mingle } from './consumer/mingle.js';
import { OutcomeRecorder } from './request/outcome-recorder.js';
import { GroupedResultStore } from './grouped-result-store.js';
import { Pool } from './pool.js';
import { RequestOutcomes, type TaskReport } from './request/request-outcomes.js';
import { retrying, sharedAbortController } from './service-retry.js';
import { RevokedSet } from './revoked-set.js';
import { RunningTasks } from './running-tasks.js';
import { StartChecks } from './request/start-checks.js';
import { Steps, type Step } from './steps.js';
import { TaskStrategy } from './strategy.js';
import type { TaskRequest } from './request/task-request.js';
import { TaskRegistry } from './task-registry.js';
import { TaskRunner } from './request/task-runner.js';
import { workerSettings, type WorkerOptions, type WorkerSettings } from './worker-options.js';
import type { WorkerServices } from './worker-services.js';

export interface WorkerEvents {
  /** Consuming (again) after connecting to the broker. */
  ready: [];
  'broker-disconnected': [];
  'task-finished': [report: TaskReport];
  closed: [];
}

type Lifecycle = 'new' | 'starting' | 'running' | 'closing' | 'closed';

export class Worker extends EventEmitter<WorkerEvents> {
  readonly nodeName: string;
  readonly queues: readonly string[];
  readonly registry: TaskRegistry;

  private readonly logger: Logger;
  private readonly session: BrokerSession;
  private readonly events: EventDispatcher;
  private readonly revoked = new RevokedSet();
  private readonly running = new RunningTasks();
  private readonly clock = new LogicalClock();
  private readonly pool: Pool<TaskRequest>;
  private readonly eta: EtaSchedule;
  private readonly consumer: Consumer;
  private readonly heart: Heart;
  private readonly closeSignal = new AbortController();
  /** Fires when close()'s grace period runs out: result writes still retrying give up then. */
  private readonly graceOver = sharedAbortController();
  private readonly settings: WorkerSettings;
  private readonly steps: Steps;

  private lifecycle: Lifecycle = 'new';
  private mongo: MongoClient | null = null;
  private results: GroupedResultStore | null = null;
  private dataStore: DataStore | null = null;
  private closing: Promise<void> | null = null;
  /** Settles on the first `ready`; made before the session starts, so that it cannot be missed. */
  private firstReady: Promise<void> = Promise.resolve();
  /** Whether run() was called before close() (only then does the worker say it goes offline). */
  private wasStarted = false;
  private graceMs = 0;

  constructor(
    private readonly options: WorkerOptions,
    private readonly services: WorkerServices,
  ) {
    super();
    this.nodeName = options.nodeName;
    this.queues = [...options.queues];
    this.registry = new TaskRegistry(options.tasks);
    const logger = (this.logger = options.logger ?? pino({ level: 'info' }));
    const settings = (this.settings = workerSettings(options));
    const { nodeName, queues, registry, revoked, running, clock, graceOver } = this;
    const { defaultQueue, resultWriteDeadlineMs } = settings;
    const queueType = options.broker.queueType;
    const session = (this.session = services.session);
    const publisher = services.publisher;
    const report = (taskReport: TaskReport): boolean => this.emit('task-finished', taskReport);

    const events = (this.events = new EventDispatcher(nodeName, () => clock.tick(), { taskEvents: settings.sendTaskEvents }));
    const recorder = new OutcomeRecorder({
      logger,
      graceOver: graceOver.signal,
      store: () => this.results,
      deadlineMs: () => (this.lifecycle === 'closing' ? Math.min(resultWriteDeadlineMs, 5_000) : resultWriteDeadlineMs),
    });
    // The parts the modules below are made of; each takes those its options name.
    const parts = { nodeName, queues, logger, events, recorder, report, registry, revoked, running, clock, settings, queueType };
    const outcomes = new RequestOutcomes({
      ...parts,
      forgetDeliveries: (taskId) => this.results?.forgetDeliveries(taskId) ?? Promise.resolve(),
      publish: (message) => publisher.publish(message),
    });
    // Celery's built-in tasks this worker runs; not listed by `registered`, like Celery's own.
    const chordUnlock = chordUnlockTask({ results: () => this.requireResults(), publish: (m) => outcomes.publishAll(m), defaultQueue });
    const builtins = new Map([[chordUnlock.name, chordUnlock]]);
    const checks = new StartChecks({
      ...parts,
      outcomes,
      graceOver: graceOver.signal,
      records: () => this.results,
      connection: () => session.connection,
    });
    const runner = new TaskRunner({
      ...{ ...parts, checks, outcomes },
      dataStore: () => this.dataStore,
      runLater: (request, delayMs) => this.eta.hold(request, delayMs),
    });
    this.pool = new Pool(settings.concurrency, (request, release) => void runner.execute(request, release));
    this.eta = new EtaSchedule((request) => this.pool.submit(request));
    const strategy = new TaskStrategy({
      ...{ ...parts, checks, eta: this.eta },
      lookup: (name) => registry.get(name) ?? builtins.get(name),
      closing: () => this.stopping,
      submit: (request) => this.pool.submit(request),
    });
    this.heart = new Heart(events, () => ({ active: running.size, processed: outcomes.processedTotal }));
    const target = controlTarget({
      ...parts,
      stats: () => ({ processedByTask: outcomes.processed, broker: options.broker, brokerConnected: session.connected }),
      sendHeartbeat: () => this.heart.beat(),
    });
    this.consumer = new Consumer({
      ...parts,
      mailbox: new ControlMailbox(target, logger.child({ component: 'control' })),
      currentConnection: () => session.connection,
      stopping: () => this.stopping,
      onDelivery: (delivery) => strategy.onDelivery(delivery),
    });
    this.steps = new Steps(this.stepList(), (step, err) => logger.error({ err, step }, 'worker step failed to stop'));
  }

  /**
   * In start order. So close() stops taking deliveries, returns what is held, gives running tasks
   * the grace period, then acknowledges, says `worker-offline`, and closes the connection before
   * the publisher (whose channels end with it, so its close cannot wait on a silent broker).
   */
  private stepList(): Step[] {
    const nothing = (): void => undefined;
    return [
      { name: 'database', start: () => this.connectDatabase(), stop: () => this.mongo?.close().catch(nothing) },
      { name: 'publisher', start: nothing, stop: () => this.services.publisher.close() },
      { name: 'session', start: () => this.startSession(), stop: () => this.session.close() },
      { name: 'events', start: nothing, stop: () => (this.wasStarted ? this.events.flush() : undefined) },
      // Started on each connection by attach(); stopped for good here.
      { name: 'heart', start: nothing, stop: () => (this.wasStarted ? this.heart.offline() : this.heart.stop()) },
      { name: 'acknowledgements', start: nothing, stop: () => this.consumer.flush() },
      { name: 'pool', start: nothing, stop: () => this.drainPool() },
      { name: 'eta schedule', start: nothing, stop: () => this.eta.returnAll() },
      { name: 'consumer', start: () => this.consuming(), stop: () => this.consumer.cancel() },
    ];
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
      { node: this.nodeName, queues: this.queues, concurrency: this.pool.concurrency, tasks: this.registry.names },
      'worker starting',
    );
    try {
      await this.steps.start(() => this.closeSignal.signal.aborted);
    } catch (error) {
      if (this.closeSignal.signal.aborted) return; // closed while waiting for the database
      throw error;
    }
  }

  /**
   * Graceful stop: no new tasks; prefetched ones go back to the queue; running ones get
   * `graceMs` to finish, after which they are abandoned unacknowledged (the broker redelivers).
   */
  close(graceMs = this.settings.shutdownGraceMs): Promise<void> {
    this.closing ??= this.shutdown(graceMs);
    return this.closing;
  }

  private get stopping(): boolean {
    return this.lifecycle === 'closing' || this.lifecycle === 'closed';
  }

  private async connectDatabase(): Promise<void> {
    this.mongo = await retrying(this.services.openDatabase, {
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

  private startSession(): void {
    this.firstReady = new Promise<void>((resolve) => this.once('ready', resolve));
    this.session.on('connected', (connection) => void this.attach(connection));
    this.session.on('disconnected', (error) => this.detach(error));
    this.session.on('retrying', (error, delayMs) =>
      this.logger.warn({ err: error.message, retryInMs: delayMs }, 'broker not reachable, retrying'),
    );
    this.session.start();
  }

  /** Resolves once the worker consumes, or is closed first. */
  private async consuming(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.closeSignal.signal.addEventListener('abort', () => resolve()));
    await Promise.race([this.firstReady, closed]);
  }

  /** (Re)attaches the consumer on a fresh connection; the first time, mingles and says it is online. */
  private async attach(connection: ChannelModel): Promise<void> {
    if (this.stopping) return;
    if (!(await this.consumer.attach(connection))) return;
    if (this.settings.mingle && !this.heart.announcedOnline) await mingle(this.session, this.nodeName, this.revoked, this.logger);
    this.heart.start();
    this.logger.info({ node: this.nodeName, queues: this.queues, broker: this.session.address }, 'worker ready');
    this.lifecycle = this.lifecycle === 'starting' ? 'running' : this.lifecycle;
    this.emit('ready');
  }

  private detach(error: Error | undefined): void {
    this.logger.warn({ err: error?.message }, 'broker connection lost');
    this.consumer.detach();
    this.heart.stop();
    // Unacknowledged messages return to the queue with the connection: forget our copies.
    this.pool.takeWaiting();
    this.eta.forget();
    this.emit('broker-disconnected');
  }

  private requireResults(): ResultStore {
    if (this.results === null) throw new Error('result store not connected');
    return this.results;
  }

  private async shutdown(graceMs: number): Promise<void> {
    this.wasStarted = this.lifecycle !== 'new';
    this.graceMs = graceMs;
    this.lifecycle = 'closing';
    this.closeSignal.abort();
    this.logger.info({ running: this.running.size, graceMs }, 'worker shutting down');
    await this.steps.stop();
    this.lifecycle = 'closed';
    this.logger.info('worker stopped');
    this.emit('closed');
  }

  /** Messages held but not started go back to the queue; running tasks get the grace period. */
  private async drainPool(): Promise<void> {
    this.pool.close();
    for (const request of this.pool.takeWaiting()) request.requeue();
    await this.running.finishWithin(this.graceMs, (running) => {
      this.logger.warn({ running }, 'grace period over; abandoning running tasks');
      this.graceOver.abort();
    });
  }
}
