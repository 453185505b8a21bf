/**
 * The shapes the Operations page is drawn from: what one API process's monitor shows
 * (operations-monitor.ts) and what it tells the other processes under the cluster
 * (process-merge.ts). Kept apart from both so that neither imports the other.
 */
import type { JsonValue } from '../../queue/protocol/json.js';
import type { MinuteCount } from './minute-counts.js';
import type { OperationsWorker } from './worker-board.js';

export interface OperationsQueue {
  name: string;
  messages: number;
  consumers: number;
  /** Per second over the last minute. */
  publishRate: number;
  deliverRate: number;
}

export interface RunningTask {
  id: string;
  name: string;
  worker: string;
  args: JsonValue;
  kwargs: JsonValue;
  /** When the worker started it (ISO time), if it said. */
  started: string | null;
}

export interface ClusterView {
  workers: OperationsWorker[];
  queues: OperationsQueue[];
  running: RunningTask[];
  minutes: MinuteCount[];
  /** Since when outcomes are counted from events (ISO time); earlier minutes come from the result store. */
  listeningSince: string;
}

/** What one API process's monitor knows that others do not, as it answers the primary. */
export interface ProcessOperations {
  /** Queue → tasks per second this process submitted over the last minute. */
  publishRates: Record<string, number>;
  /** Queue → of those, tasks per second a worker reported receiving. */
  deliverRates: Record<string, number>;
  minutes: MinuteCount[];
  workers: OperationsWorker[];
  listeningSince: string;
}
