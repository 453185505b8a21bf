/**
 * Depth and consumer count of every task queue the workers consume, as the queue module observes
 * them (queue/observe/queue-depths.ts), measured when scraped. A queue that no longer exists, or
 * a broker that does not answer in time, leaves its series out.
 */
import { Gauge, type Registry } from 'prom-client';
import type { TaskCatalog } from '../queue/api/task-catalog.js';
import { knownQueues, readQueues, type QueueState } from '../queue/observe/queue-depths.js';
import type { ScrapeChannel } from '../queue/observe/scrape-channel.js';
import { METRIC_PREFIX, PROCESS_WIDE } from './registry.js';
import { SharedProbe } from './shared-probe.js';

export function registerQueueMetrics(registry: Registry, catalog: TaskCatalog, channel: ScrapeChannel): void {
  const probe = new SharedProbe(async () => readQueues(await knownQueues(catalog), channel));
  const queueGauge = (name: string, help: string, value: (queue: QueueState) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ['queue'],
      registers: [registry],
      aggregator: PROCESS_WIDE,
      async collect() {
        const queues = await probe.run();
        this.reset();
        for (const q of queues) this.set({ queue: q.name }, value(q));
      },
    });
  queueGauge(`${METRIC_PREFIX}queue_messages`, 'Messages ready in a task queue (waiting for a worker)', (q) => q.messages);
  queueGauge(`${METRIC_PREFIX}queue_consumers`, 'Consumers (worker channels) of a task queue', (q) => q.consumers);
}
