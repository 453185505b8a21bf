/**
 * What the Operations page shows about the cluster, kept by the API process: it listens to the
 * workers' Celery events (heard once per process, shared with the metrics; workers are asked to
 * send task events, as Flower does), counts outcomes per minute for the last hour, and asks the
 * workers about their queues, pool sizes and running tasks with remote-control broadcasts, at
 * most every few seconds and only while someone looks at the page.
 *
 * Queue rates are counted here too: published = tasks this API process submitted to the queue,
 * delivered = those of them a worker reported receiving (`task-received`), both per second over
 * the last minute. Tasks sent by other clients show in the depth but not in the rates. Under the
 * cluster every API process keeps one, and the page merges them all (process-merge.ts).
 */
import type { Logger } from '../../log/logger.js';
import type { QueueService } from '../../queue/api/queue-service.js';
import type { CeleryEvent } from '../../queue/events/worker-events.js';
import type { JsonObject, JsonValue } from '../../queue/protocol/json.js';
import { parseIsoTimestamp } from '../../queue/protocol/timestamps.js';
import { readQueues } from '../../queue/observe/queue-depths.js';
import { ScrapeChannel } from '../../queue/observe/scrape-channel.js';
import { MinuteCounts, MINUTES } from './minute-counts.js';
import type { ClusterView, ProcessOperations, RunningTask } from './views.js';
import { RateWindow } from './rate-window.js';
import { WorkerBoard, concurrencyOf, type ControlFacts } from './worker-board.js';
import isPlainObject from 'is-plain-obj';

/** How long the workers' answers to a broadcast are gathered. */
const BROADCAST_MS = 1_000;
/** Answers younger than this are reused. */
const CONTROL_MAX_AGE_MS = 4_000;
/** Task ids remembered at most while a delivery or a submission is awaited (oldest go first). */
const MAX_AWAITED = 20_000;
/** Result documents read at most to fill the last hour's chart at start. */
const BACKFILL_LIMIT = 200_000;

/** Adds to a map or set of bounded size; the oldest entry goes first. */
function remember<V>(store: Map<string, V> | Set<string>, key: string, value: V): void {
  if (store instanceof Map) store.set(key, value);
  else store.add(key);
  if (store.size > MAX_AWAITED) {
    const oldest = store.keys().next().value;
    if (oldest !== undefined) store.delete(oldest);
  }
}

function runningTasks(node: string, reply: JsonValue | undefined): RunningTask[] {
  if (!Array.isArray(reply)) return [];
  return reply
    .filter((v): v is JsonObject => isPlainObject(v))
    .flatMap((t) => {
      if (typeof t.id !== 'string') return [];
      const started = typeof t.time_start === 'number' ? new Date(t.time_start * 1000).toISOString() : null;
      return [
        {
          id: t.id,
          name: typeof t.name === 'string' ? t.name : '',
          worker: node,
          args: (t.args ?? null) as JsonValue,
          kwargs: (t.kwargs ?? null) as JsonValue,
          started,
        },
      ];
    });
}

export class OperationsMonitor {
  private readonly board: WorkerBoard;
  private readonly minutes = new MinuteCounts();
  private readonly published = new RateWindow();
  private readonly delivered = new RateWindow();
  /** Task id → queue, for tasks submitted here and not yet received by a worker. */
  private readonly awaited = new Map<string, string>();
  /**
   * Ids of tasks received by a worker before their submission was confirmed here (the worker's
   * event can overtake the broker's publisher confirm), or submitted by other clients.
   */
  private readonly receivedEarly = new Set<string>();
  private stopListening: (() => Promise<void>) | undefined;
  private readonly channel: ScrapeChannel;
  private readonly stopSubmissions: () => void;
  private readonly listeningSince = Date.now();
  private running: RunningTask[] = [];
  private queueNames: string[] = [];
  private controlAt = 0;
  private controlRead: Promise<void> | null = null;

  constructor(
    private readonly queue: QueueService,
    private readonly logger: Logger,
    /** Workers listed at most (WORKERS_TRACKED_MAX). */
    maxWorkers?: number,
  ) {
    this.board = new WorkerBoard(maxWorkers);
    this.channel = new ScrapeChannel(queue.session);
    this.stopSubmissions = queue.onSubmitted(({ taskId, queue: name }) => {
      this.published.add(name);
      if (this.receivedEarly.delete(taskId)) this.delivered.add(name);
      else remember(this.awaited, taskId, name);
    });
  }

  start(): this {
    this.stopListening = this.queue.events.listen((event) => this.onEvent(event));
    this.backfill().catch((err: unknown) => this.logger.warn({ err }, 'operations: could not read the last hour of task outcomes'));
    return this;
  }

  async close(): Promise<void> {
    this.stopSubmissions();
    await this.stopListening?.();
    await this.channel.close();
  }

  /** The cluster now; waits for the workers' answers only the first time. */
  async view(now = Date.now()): Promise<ClusterView> {
    if (this.controlAt === 0) await this.refreshControl();
    else if (now - this.controlAt > CONTROL_MAX_AGE_MS) void this.refreshControl();
    const depths = await readQueues(this.queueNames, this.channel);
    const queues = depths.map((q) => ({
      ...q,
      publishRate: this.published.rate(q.name, now),
      deliverRate: this.delivered.rate(q.name, now),
    }));
    return {
      workers: this.board.snapshot(now),
      queues,
      running: this.running,
      minutes: this.minutes.series(now),
      listeningSince: new Date(this.listeningSince).toISOString(),
    };
  }

  /** What only this process knows, for the process that answers the page: no broker round trip. */
  processOperations(now = Date.now()): ProcessOperations {
    return {
      publishRates: this.published.rates(now),
      deliverRates: this.delivered.rates(now),
      minutes: this.minutes.series(now),
      workers: this.board.snapshot(now),
      listeningSince: new Date(this.listeningSince).toISOString(),
    };
  }

  private refreshControl(): Promise<void> {
    this.controlRead ??= this.readControl()
      .catch((err: unknown) => this.logger.debug({ err }, 'operations: workers did not answer'))
      .finally(() => {
        this.controlAt = Date.now();
        this.controlRead = null;
      });
    return this.controlRead;
  }

  private async readControl(): Promise<void> {
    const { control } = this.queue;
    const options = { timeoutMs: BROADCAST_MS };
    const [queues, stats, active] = await Promise.all([
      control.activeQueues(options),
      control.broadcast('stats', {}, options),
      control.broadcast('active', {}, options),
    ]);
    const facts = new Map<string, ControlFacts>();
    const names = new Set<string>();
    for (const node of new Set([...Object.keys(queues), ...Object.keys(stats)])) {
      const consumed = (queues[node] ?? []).map((q: JsonObject) => q.name).filter((n): n is string => typeof n === 'string');
      for (const n of consumed) names.add(n);
      facts.set(node, { queues: consumed.sort(), concurrency: concurrencyOf(stats[node]) });
    }
    this.board.setControlFacts(facts);
    this.queueNames = [...names].sort();
    this.running = Object.entries(active).flatMap(([node, reply]) => runningTasks(node, reply));
  }

  private onEvent(event: CeleryEvent): boolean {
    const now = Date.now();
    if (typeof event.hostname !== 'string') return false;
    if (event.type.startsWith('worker-')) return this.board.observeWorker({ ...event, hostname: event.hostname }, now);
    if (event.type === 'task-received' && typeof event.uuid === 'string') {
      const queue = this.awaited.get(event.uuid);
      if (queue !== undefined) {
        this.awaited.delete(event.uuid);
        this.delivered.add(queue, now);
      } else {
        remember(this.receivedEarly, event.uuid, undefined);
      }
    } else if (event.type === 'task-succeeded' || event.type === 'task-failed') {
      const outcome = event.type === 'task-succeeded' ? 'succeeded' : 'failed';
      this.minutes.add(outcome, now);
      this.board.countOutcome(event.hostname, outcome);
    }
    return false;
  }

  /**
   * Fills the chart's last hour from the result store: tasks that ended before this process
   * listened to events (those after it are counted from their events). `date_done` is indexed;
   * it is a naive-UTC ISO string, or a date from newer Celery versions.
   */
  private async backfill(): Promise<void> {
    const until = new Date(this.listeningSince);
    const from = new Date(this.listeningSince - MINUTES * 60_000);
    for await (const doc of this.queue.endedTasks(from, until, BACKFILL_LIMIT)) {
      const done =
        doc.date_done instanceof Date ? doc.date_done : typeof doc.date_done === 'string' ? parseIsoTimestamp(doc.date_done) : null;
      if (done !== null) this.minutes.add(doc.status === 'SUCCESS' ? 'succeeded' : 'failed', done.getTime());
    }
  }
}
