/** Worker metrics from the worker tracker, as of the scrape. */
import { Gauge, type Registry } from 'prom-client';
import { METRIC_PREFIX, PROCESS_WIDE } from './registry.js';
import type { WorkerTracker } from '../queue/observe/worker-tracker.js';

export function registerWorkerMetrics(registry: Registry, tracker: WorkerTracker): void {
  new Gauge({
    name: `${METRIC_PREFIX}workers_online`,
    help: 'Workers whose last heartbeat is at most two heartbeat intervals old',
    registers: [registry],
    aggregator: PROCESS_WIDE,
    collect() {
      this.set(tracker.snapshot().filter((w) => w.online).length);
    },
  });
  new Gauge({
    name: `${METRIC_PREFIX}worker_online`,
    help: 'Per worker seen in the last 10 minutes: online (1) or gone (0)',
    labelNames: ['worker'],
    registers: [registry],
    aggregator: PROCESS_WIDE,
    collect() {
      this.reset();
      for (const w of tracker.snapshot()) this.set({ worker: w.node }, w.online ? 1 : 0);
    },
  });
  new Gauge({
    name: `${METRIC_PREFIX}worker_active_tasks`,
    help: 'Tasks a worker is running, as of its last heartbeat',
    labelNames: ['worker'],
    registers: [registry],
    aggregator: PROCESS_WIDE,
    collect() {
      this.reset();
      for (const w of tracker.snapshot()) if (w.online) this.set({ worker: w.node }, w.active);
    },
  });
}
