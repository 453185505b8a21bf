/**
 * Under the cluster (API_PROCESSES > 1) each API process keeps its own OperationsMonitor; the one
 * that answers the page gathers what every process reports (through the primary, bounded in time)
 * and merges it, so the page shows the same whichever process a poll reaches:
 *   - queue rates are summed: each process counts the tasks it submitted itself and their
 *     deliveries, so no task is counted by two processes;
 *   - outcomes per minute take the largest count of each minute: every process receives every
 *     task event, so their counts are of the same tasks, and one whose monitor started later only
 *     lacks some (between its backfill from the result store and its first event); summing
 *     would count each task once per process;
 *   - the worker board likewise takes each worker's largest succeeded/failed counts, its freshest
 *     heartbeat, and queues and pool size from whoever has them (the answering process first:
 *     it asked the workers just now).
 */
import { unavailable } from '../../errors.js';
import type { ClusterPeer } from '../../runtime/cluster/peer.js';
import type { MinuteCount } from './minute-counts.js';
import type { ClusterView, ProcessOperations } from './views.js';
import type { OperationsWorker } from './worker-board.js';
import isPlainObject from 'is-plain-obj';

/** The question every API process answers with its own ProcessOperations. */
export const OPERATIONS_TOPIC = 'admin-operations';

/** Whether an answer from another process has the shape this version sends (a process mid-upgrade may not). */
export function isProcessOperations(value: unknown): value is ProcessOperations {
  return (
    isPlainObject(value) &&
    isPlainObject(value.publishRates) &&
    isPlainObject(value.deliverRates) &&
    Array.isArray(value.minutes) &&
    Array.isArray(value.workers) &&
    typeof value.listeningSince === 'string'
  );
}

const sum = (processes: readonly ProcessOperations[], rates: 'publishRates' | 'deliverRates', queue: string): number =>
  processes.reduce((total, p) => total + (p[rates][queue] ?? 0), 0);

/** The answering process's minutes, each at the largest count any process has for it. */
function mergeMinutes(own: readonly MinuteCount[], processes: readonly ProcessOperations[]): MinuteCount[] {
  const largest = new Map(own.map((m) => [m.minute, { ...m }]));
  for (const p of processes) {
    for (const m of p.minutes) {
      const kept = largest.get(m.minute);
      if (kept === undefined) continue; // outside the answering process's hour
      kept.succeeded = Math.max(kept.succeeded, m.succeeded);
      kept.failed = Math.max(kept.failed, m.failed);
    }
  }
  return own.map((m) => largest.get(m.minute) as MinuteCount);
}

const heardAt = (w: OperationsWorker): number => (w.lastHeartbeat === null ? -Infinity : Date.parse(w.lastHeartbeat));

/**
 * One entry per worker any process lists, `limit` at most (each process lists as many, but not
 * necessarily the same ones); `boards[0]` is the answering process's.
 */
export function mergeWorkers(boards: readonly (readonly OperationsWorker[])[], limit = Infinity): OperationsWorker[] {
  const byNode = new Map<string, OperationsWorker[]>();
  for (const board of boards) {
    for (const w of board) {
      const entries = byNode.get(w.node);
      if (entries === undefined) byNode.set(w.node, [w]);
      else entries.push(w);
    }
  }
  return [...byNode.keys()]
    .sort()
    .slice(0, limit)
    .map((node) => {
      const entries = byNode.get(node) as OperationsWorker[];
      // The first of the freshest: the answering process's own when it is as fresh as any.
      const freshest = entries.reduce((best, w) => (heardAt(w) > heardAt(best) ? w : best));
      return {
        ...freshest,
        queues: entries.find((w) => w.queues.length > 0)?.queues ?? [],
        concurrency: entries.find((w) => w.concurrency !== null)?.concurrency ?? null,
        succeeded: Math.max(...entries.map((w) => w.succeeded)),
        failed: Math.max(...entries.map((w) => w.failed)),
      };
    });
}

/**
 * The answering process's view with what every process (itself included) reported merged in,
 * with `maxWorkers` workers at most.
 */
export function mergeProcesses(own: ClusterView, processes: readonly ProcessOperations[], maxWorkers = Infinity): ClusterView {
  const since = Math.min(Date.parse(own.listeningSince), ...processes.map((p) => Date.parse(p.listeningSince)));
  return {
    ...own,
    queues: own.queues.map((q) => ({
      ...q,
      publishRate: sum(processes, 'publishRates', q.name),
      deliverRate: sum(processes, 'deliverRates', q.name),
    })),
    minutes: mergeMinutes(own.minutes, processes),
    workers: mergeWorkers([own.workers, ...processes.map((p) => p.workers)], maxWorkers),
    listeningSince: new Date(since).toISOString(),
  };
}

/** What every API process's monitor counted (this one's included); an ApiError 503 if it does not come. */
export async function gatherProcessOperations(peers: ClusterPeer): Promise<ProcessOperations[]> {
  const fail = (why: string) =>
    unavailable(`The operations data of the other API processes could not be read: ${why}.`, 'operations_unavailable');
  const answers = await peers.gather(OPERATIONS_TOPIC).catch((err: unknown) => {
    throw fail(err instanceof Error ? err.message : String(err));
  });
  if (!answers.every(isProcessOperations)) throw fail('an API process answered in an unknown shape');
  return answers;
}
