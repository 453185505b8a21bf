/**
 * Depth and consumer count of every task queue the workers consume (from their `active_queues`
 * answers, as the task list learns them), by a passive declare per queue when scraped. A queue
 * that no longer exists, or a broker that does not answer in time, leaves its series out.
 */
import { Gauge, type Registry } from 'prom-client';
import type { TaskCatalog } from '../queue/api/task-catalog.js';
import { METRIC_PREFIX, PROCESS_WIDE } from './registry.js';
import { withTimeout, type ScrapeChannel } from './scrape-channel.js';
import { SharedProbe } from './shared-probe.js';

export interface QueueState {
  name: string;
  messages: number;
  consumers: number;
}

/** A cluster with more queues than this is summarised by its first ones (sorted by name). */
const MAX_QUEUES = 200;

export async function readQueues(names: readonly string[], channel: ScrapeChannel): Promise<QueueState[]> {
  const out: QueueState[] = [];
  for (const name of names.slice(0, MAX_QUEUES)) {
    try {
      const ok = await withTimeout(channel.get().then((c) => c.checkQueue(name)));
      out.push({ name, messages: ok.messageCount, consumers: ok.consumerCount });
    } catch {
      // Missing (the channel is reopened for the next one) or no answer in time.
    }
  }
  return out;
}

/** The queues the workers consume; the last known list when the workers do not answer now. */
async function knownQueues(catalog: TaskCatalog): Promise<string[]> {
  try {
    return (await withTimeout(catalog.get())).queues;
  } catch {
    return catalog.peek()?.queues ?? [];
  }
}

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
