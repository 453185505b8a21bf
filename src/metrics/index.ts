/**
 * The service's metrics: builds the registry, feeds it from worker events and the API's own
 * submissions, and registers the metrics measured when scraped. Present only with
 * METRICS_ENABLED; the HTTP side (request timing, the /api/metrics route) is added by the app.
 */
import type { Db } from 'mongodb';
import { Registry } from 'prom-client';
import type { Settings } from '../config/settings.js';
import type { Logger } from '../log/logger.js';
import type { QueueService } from '../queue/api/queue-service.js';
import type { CeleryEvent } from '../queue/events/worker-events.js';
import type { TaskCatalog } from '../queue/api/task-catalog.js';
import type { FireEvent, Scheduler } from '../queue/schedules/scheduler.js';
import { registerCertificateMetrics, certificateFiles } from './certificate-collector.js';
import { registerHealthMetrics } from './health-collector.js';
import { ipAllowList, type IpAllowList } from '../config/ip-allowlist.js';
import type { ClusterPeer } from '../runtime/cluster/peer.js';
import { answerMetrics, gatherMetrics } from './process-metrics.js';
import { BoundedLabel, OTHER } from './labels.js';
import { registerQueueMetrics } from './queue-collector.js';
import { createCoreMetrics, type CoreMetrics } from './registry.js';
import { ScrapeChannel } from '../queue/observe/scrape-channel.js';
import { SharedProbe } from './shared-probe.js';
import { TaskOutcomes } from './task-outcomes.js';
import { registerWorkerMetrics } from './worker-collector.js';
import { WorkerTracker } from '../queue/observe/worker-tracker.js';

/** Distinct task names labelled at most; the rest count under OTHER. */
const TASK_NAME_LIMIT = 500;
/**
 * How long one exposition answers every scrape: scrapes arriving together or within this time
 * share one computation, so many scrapers (or a flood of scrapes) cost the API no more than one.
 */
export const EXPOSITION_REUSE_MS = 1_000;

export interface MetricsSources {
  settings: Settings;
  serviceDb: Db;
  queue: QueueService | undefined;
  logger: Logger;
  /** Under the cluster: the other API processes, asked through the primary. */
  cluster?: ClusterPeer;
  /** This process's scheduler, whose fires are counted; absent without a queue. */
  scheduler?: Pick<Scheduler, 'onFire'>;
}

export class ServiceMetrics {
  /** What this process counts itself (requests, submissions, task events, the process's own use). */
  readonly core: CoreMetrics;
  /**
   * The state of things every API process sees alike (database and broker up, queues, workers,
   * certificates), measured when scraped: under the cluster only by the process that got the
   * scrape, once, instead of by every process.
   */
  readonly shared = new Registry();
  readonly workers: WorkerTracker;
  readonly allowList: IpAllowList;
  private readonly taskNames = new BoundedLabel(TASK_NAME_LIMIT);
  /** Starts counting task outcomes from the workers' events; none without a queue. */
  private readonly listenToWorkers: (() => () => Promise<void>) | undefined;
  private stopListening: (() => Promise<void>) | undefined;
  private readonly channel: ScrapeChannel | undefined;
  private readonly catalog: TaskCatalog | undefined;
  private readonly cluster: ClusterPeer | undefined;
  private readonly scheduler: Pick<Scheduler, 'onFire'> | undefined;
  private stopCountingFires: (() => void) | undefined;
  private readonly text = new SharedProbe(() => this.compute(), EXPOSITION_REUSE_MS);

  constructor(sources: MetricsSources) {
    const { settings, queue } = sources;
    this.catalog = queue?.catalog;
    this.core = createCoreMetrics();
    this.workers = new WorkerTracker(settings.workersTrackedMax);
    this.allowList = ipAllowList(settings.metrics.allowedIps);
    const registry = this.shared;
    this.cluster = sources.cluster;
    this.scheduler = sources.scheduler;
    this.channel = queue === undefined ? undefined : new ScrapeChannel(queue.session);
    registerHealthMetrics(registry, {
      db: sources.serviceDb,
      broker: queue === undefined || this.channel === undefined ? undefined : { session: queue.session, channel: this.channel },
    });
    registerCertificateMetrics(registry, certificateFiles(settings));
    if (queue !== undefined && this.channel !== undefined) {
      registerQueueMetrics(registry, queue.catalog, this.channel);
      registerWorkerMetrics(registry, this.workers);
      const outcomes = new TaskOutcomes(this.core.taskEvents, (name) => this.taskLabel(name));
      this.listenToWorkers = () => queue.events.listen((event) => this.onEvent(event, outcomes));
    }
  }

  start(): this {
    this.stopListening = this.listenToWorkers?.();
    this.stopCountingFires = this.scheduler?.onFire((event) => this.scheduleFire(event));
    if (this.cluster !== undefined) answerMetrics(this.cluster, this.core.registry);
    return this;
  }

  get contentType(): string {
    return this.core.registry.contentType;
  }

  /**
   * Every metric in the text format. Under the cluster the counted ones are those of all API
   * processes, gathered through the primary and aggregated here with prom-client (each metric by
   * its `aggregator`: counters and histograms summed); the shared state is measured here only.
   * Computed at most once per EXPOSITION_REUSE_MS, whoever asks.
   */
  exposition(): Promise<string> {
    return this.text.run();
  }

  private async compute(): Promise<string> {
    const [counted, shared] = await Promise.all([
      this.cluster === undefined ? this.core.registry.metrics() : gatherMetrics(this.cluster),
      this.shared.metrics(),
    ]);
    return this.shared.getMetricsAsArray().length === 0 ? counted : `${counted}\n${shared}`;
  }

  /** The label of a task name: itself when a live worker registers it, else OTHER. */
  taskLabel(name: string): string {
    const known = this.catalog?.peek()?.tasks.has(name) ?? false;
    return known ? this.taskNames.label(name) : OTHER;
  }

  /** Counts a submission the broker accepted. */
  taskSubmitted(name: string): void {
    this.core.taskSubmissions.inc({ task: this.taskLabel(name) });
  }

  private scheduleFire(event: FireEvent): void {
    const { core } = this;
    if (event.kind === 'missed') {
      core.scheduleMissed.inc(event.count);
      return;
    }
    core.scheduleFires.inc({ kind: event.kind, outcome: event.outcome });
    if (event.latenessMs !== null) core.scheduleLateness.observe({ kind: event.kind }, event.latenessMs / 1000);
  }

  async close(): Promise<void> {
    this.stopCountingFires?.();
    await this.stopListening?.();
    await this.channel?.close();
  }

  private onEvent(event: CeleryEvent, outcomes: TaskOutcomes): boolean {
    if (event.type.startsWith('task-')) {
      outcomes.observe(event);
      return false;
    }
    if (event.type.startsWith('worker-') && typeof event.hostname === 'string') {
      return this.workers.observe({ ...event, hostname: event.hostname });
    }
    return false;
  }
}
