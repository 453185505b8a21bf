/**
 * The workers and task queues of a running installation, as `ops/status` shows them: remote
 * control broadcasts (`ping`, `stats`, `active`, `active_queues`) gathered for a short time,
 * worker heartbeats heard meanwhile (the window is at least one heartbeat interval), and a
 * passive declare per queue for its depth and consumers.
 */
import { randomUUID } from 'node:crypto';
import type { BrokerSession } from '../queue/connection/broker-session.js';
import { ControlClient } from '../queue/remote-control/control-client.js';
import type { JsonValue } from '../queue/protocol/json.js';
import { declareEventReceiverQueue } from '../queue/protocol/entities.js';
import { HEARTBEAT_INTERVAL_S } from '../queue/protocol/events.js';
import { eventsOf } from '../queue/events/worker-events.js';
import { readQueues, type QueueState } from '../queue/observe/queue-depths.js';
import { ScrapeChannel } from '../queue/observe/scrape-channel.js';
import isPlainObject from 'is-plain-obj';

export interface WorkerRow {
  node: string;
  /** Answered the ping. */
  online: boolean;
  /** Tasks running now; null when the worker did not answer `active`. */
  active: number | null;
  /** Tasks finished since it started (sum of `stats.total`); null without a `stats` answer. */
  processed: number | null;
  /** When its last heartbeat was heard during the window (ISO time); null when none was. */
  lastHeartbeat: string | null;
}

export interface ClusterStatus {
  workers: WorkerRow[];
  queues: QueueState[];
}

function processedOf(stats: JsonValue | undefined): number | null {
  if (!isPlainObject(stats) || !isPlainObject(stats.total)) return null;
  return Object.values(stats.total).reduce<number>((sum, n) => sum + (typeof n === 'number' ? n : 0), 0);
}

/** Listens to worker events until the returned function is called; gives node → last heartbeat. */
async function listenForHeartbeats(session: BrokerSession): Promise<() => Promise<Map<string, Date>>> {
  const heard = new Map<string, Date>();
  const channel = await session.require().createChannel();
  channel.on('error', () => undefined);
  const queue = await declareEventReceiverQueue(channel, `status.${randomUUID()}`, 'worker.#');
  await channel.consume(
    queue,
    (message) => {
      if (message === null) return;
      for (const event of eventsOf(message.content)) {
        if (event.type !== 'worker-offline' && typeof event.hostname === 'string') heard.set(event.hostname, new Date());
      }
    },
    { noAck: true },
  );
  return async () => {
    await channel.close().catch(() => undefined);
    return heard;
  };
}

/** Workers and queues seen within `timeoutMs` (raised to one heartbeat interval). */
export async function readClusterStatus(session: BrokerSession, timeoutMs = 2_000): Promise<ClusterStatus> {
  const window = Math.max(timeoutMs, HEARTBEAT_INTERVAL_S * 1000 + 200);
  const control = new ControlClient({ session });
  const channel = new ScrapeChannel(session);
  try {
    const stopListening = await listenForHeartbeats(session);
    const [ping, stats, active, activeQueues] = await Promise.all([
      control.ping({ timeoutMs: window }),
      control.broadcast('stats', {}, { timeoutMs: window }),
      control.broadcast('active', {}, { timeoutMs: window }),
      control.activeQueues({ timeoutMs: window }),
    ]);
    const heartbeats = await stopListening();
    const nodes = new Set([...Object.keys(ping), ...Object.keys(stats), ...Object.keys(active), ...heartbeats.keys()]);
    const workers = [...nodes].sort().map((node): WorkerRow => {
      const running = active[node];
      return {
        node,
        online: Object.hasOwn(ping, node),
        active: Array.isArray(running) ? running.length : null,
        processed: processedOf(stats[node]),
        lastHeartbeat: heartbeats.get(node)?.toISOString() ?? null,
      };
    });
    const queueNames = new Set<string>();
    for (const queues of Object.values(activeQueues)) for (const q of queues) if (typeof q.name === 'string') queueNames.add(q.name);
    return { workers, queues: await readQueues([...queueNames].sort(), channel) };
  } finally {
    await channel.close();
    await control.close().catch(() => undefined);
  }
}

/** Plain-text tables of the status, in the style of the rest of `ops/status`. */
export function formatClusterStatus(status: ClusterStatus): string {
  const lines: string[] = ['Workers:'];
  if (status.workers.length === 0) lines.push('  (none answered)');
  else {
    lines.push(`  ${'NODE'.padEnd(40)} ${'STATE'.padEnd(8)} ${'ACTIVE'.padStart(6)} ${'PROCESSED'.padStart(9)}  LAST HEARTBEAT`);
    for (const w of status.workers) {
      lines.push(
        `  ${w.node.padEnd(40)} ${(w.online ? 'online' : 'silent').padEnd(8)} ${String(w.active ?? '-').padStart(6)} ${String(w.processed ?? '-').padStart(9)}  ${w.lastHeartbeat ?? '-'}`,
      );
    }
  }
  lines.push('', 'Queues:');
  if (status.queues.length === 0) lines.push('  (none consumed)');
  else {
    lines.push(`  ${'QUEUE'.padEnd(40)} ${'MESSAGES'.padStart(8)} ${'CONSUMERS'.padStart(9)}`);
    for (const q of status.queues)
      lines.push(`  ${q.name.padEnd(40)} ${String(q.messages).padStart(8)} ${String(q.consumers).padStart(9)}`);
  }
  return `${lines.join('\n')}\n`;
}
