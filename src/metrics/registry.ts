/**
 * The metrics registry of one service instance and the metrics updated as things happen
 * (requests, submissions, task events). Metrics measured when scraped (queues, workers, health,
 * certificates) register themselves on the same registry from their own modules.
 *
 * A registry per instance rather than prom-client's global one: tests run several apps in one
 * process, and each must see only its own numbers.
 */
import {
  Counter,
  Gauge,
  Histogram,
  Registry,
  collectDefaultMetrics,
  type Aggregator,
  type CounterConfiguration,
  type LabelValues,
} from 'prom-client';

export const METRIC_PREFIX = 'cybercom_';

/**
 * How a gauge of shared state (the same database, broker, queues, workers and certificates,
 * whichever API process measures them) combines across the processes of the cluster: one
 * process's value, never the sum. The scrape measures them in one process only, so this is the
 * rule should they ever be aggregated.
 */
export const PROCESS_WIDE: Aggregator = 'first';

/**
 * A counter for things that happen thousands of times a second (task events, submissions):
 * increments gather in a plain map and go to prom-client, one `inc` per series, when the metric
 * is read. prom-client validates and hashes the labels on every `inc`, which costs more than
 * the counting itself.
 */
export class BatchedCounter<L extends string> {
  readonly counter: Counter<L>;
  private readonly labelNames: readonly L[];
  private pending = new Map<string, { labels: LabelValues<L>; count: number }>();

  constructor(config: CounterConfiguration<L> & { labelNames: readonly L[] }) {
    this.labelNames = config.labelNames;
    const flush = (): void => this.flush();
    this.counter = new Counter({
      ...config,
      collect() {
        flush();
      },
    });
  }

  inc(labels: LabelValues<L>, value = 1): void {
    let key = '';
    // Length-prefixed, so no two label sets share a key whatever their values hold.
    for (const name of this.labelNames) {
      const labelValue = String(labels[name]);
      key += `${labelValue.length}:${labelValue}`;
    }
    const entry = this.pending.get(key);
    if (entry === undefined) this.pending.set(key, { labels, count: value });
    else entry.count += value;
  }

  private flush(): void {
    const pending = this.pending;
    this.pending = new Map();
    for (const { labels, count } of pending.values()) this.counter.inc(labels, count);
  }
}

export interface CoreMetrics {
  registry: Registry;
  httpDuration: Histogram<'route' | 'method' | 'status'>;
  taskSubmissions: BatchedCounter<'task'>;
  taskEvents: BatchedCounter<'task' | 'state'>;
  /** Schedule fires this process dealt with, by kind (scheduled, catch_up, manual) and outcome (published, skipped, refused...). */
  scheduleFires: Counter<'kind' | 'outcome'>;
  /** How late a published fire was, from its due time to the broker's confirm. */
  scheduleLateness: Histogram<'kind'>;
  /** Fires never run: passed while no scheduler ran (or its process was stopped), older than their schedule's catch-up window. */
  scheduleMissed: Counter;
}

/** Fire lateness from a prompt publish (ms) to a catch-up after a long downtime (hours). */
const LATENESS_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 60, 600, 3600];

/** Request latencies from a fast cached read (ms) to a long `?wait=` submission (s). */
const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export function createCoreMetrics(): CoreMetrics {
  const registry = new Registry();
  // Process CPU, memory, file descriptors, event-loop lag, GC: standard names, no prefix, so
  // stock dashboards for Node.js processes work unchanged.
  collectDefaultMetrics({ register: registry });
  // The default metrics stop at `external` (Buffers and every other native allocation V8 is told
  // of); the part of it in ArrayBuffers (bodies, BSON, zlib output) tells a burst's buffers from
  // the rest, under the same family of names.
  new Gauge({
    name: 'nodejs_array_buffers_bytes',
    help: 'Memory of ArrayBuffers and Buffers from Node.js in bytes (part of nodejs_external_memory_bytes).',
    registers: [registry],
    collect() {
      this.set(process.memoryUsage().arrayBuffers);
    },
  });
  return {
    registry,
    httpDuration: new Histogram({
      name: `${METRIC_PREFIX}http_request_duration_seconds`,
      help: 'HTTP requests by route pattern, method and status: latency (its _count is the request count)',
      labelNames: ['route', 'method', 'status'],
      buckets: HTTP_BUCKETS,
      registers: [registry],
    }),
    taskSubmissions: new BatchedCounter({
      name: `${METRIC_PREFIX}task_submissions_total`,
      help: 'Tasks accepted by the API (after the broker confirmed them), by task name',
      labelNames: ['task'],
      registers: [registry],
    }),
    taskEvents: new BatchedCounter({
      name: `${METRIC_PREFIX}task_events_total`,
      help: 'Task state changes reported by workers (Celery task events), by task name and state',
      labelNames: ['task', 'state'],
      registers: [registry],
      // Every API process receives every task event (each listens on a queue of its own), so
      // under the cluster the processes count the same events: the aggregate is the count of
      // the one that has seen most, not the sum.
      aggregator: 'max',
    }),
    // Each fire is dealt with by one API process: under the cluster the processes' counts add up.
    scheduleFires: new Counter({
      name: `${METRIC_PREFIX}schedule_fires_total`,
      help: 'Schedule fires dealt with, by kind (scheduled, catch_up, manual) and outcome (published, skipped, buffered, refused, failed)',
      labelNames: ['kind', 'outcome'],
      registers: [registry],
    }),
    scheduleLateness: new Histogram({
      name: `${METRIC_PREFIX}schedule_fire_lateness_seconds`,
      help: 'How late published schedule fires were: from the time each was due to the broker confirming its task',
      labelNames: ['kind'],
      buckets: LATENESS_BUCKETS,
      registers: [registry],
    }),
    scheduleMissed: new Counter({
      name: `${METRIC_PREFIX}schedule_missed_runs_total`,
      help: 'Schedule fires never run: passed while no scheduler ran (or its process was stopped), older than their catch-up window',
      registers: [registry],
    }),
  };
}
