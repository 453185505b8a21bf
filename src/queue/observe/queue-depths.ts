/**
 * Depth and consumer count of task queues, by a passive declare per queue on an observation
 * channel: what the metrics, the admin's Operations page and `ops status` show. The queues are
 * the ones the workers consume (from their `active_queues` answers, as the task list learns
 * them). A queue that no longer exists, or a broker that does not answer in time, is left out.
 */
import type { TaskCatalog } from '../api/task-catalog.js';
import { withTimeout, type ScrapeChannel } from './scrape-channel.js';

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
export async function knownQueues(catalog: TaskCatalog): Promise<string[]> {
  try {
    return (await withTimeout(catalog.get())).queues;
  } catch {
    return catalog.peek()?.queues ?? [];
  }
}
