/**
 * What a worker is told (WorkerOptions, from the environment in main.ts or from a test) and the
 * settings it runs with, its defaults filled in.
 */
import type { Logger } from 'pino';
import type { BrokerSettings } from '../config/connections.js';
import { DEFAULT_QUEUE } from '../queue/protocol/entities.js';
import type { TaskDefinition } from './task-definition.js';

export interface WorkerOptions {
  nodeName: string;
  queues: string[];
  tasks: Iterable<TaskDefinition>;
  /** The broker's settings, for the queue type and the `stats` reply (the connection is WorkerServices.session). */
  broker: BrokerSettings;
  resultDatabase: string;
  resultCollection: string;
  /** Tasks running at the same time (default 1). */
  concurrency?: number;
  /**
   * Unacknowledged messages = concurrency × this, plus one per task whose result is being written
   * (see prefetch-window.ts); 0 = unlimited (default 4).
   */
  prefetchMultiplier?: number;
  /** Store STARTED before a task runs (default false, as Celery's task_track_started). */
  trackStarted?: boolean;
  /** Send task events from the start (default false; `enable_events` turns them on). */
  sendTaskEvents?: boolean;
  /** How long close() lets running tasks finish (default 30 s). */
  shutdownGraceMs?: number;
  /** Hard time limit for tasks without their own (seconds; null = none). */
  defaultTimeLimitSeconds?: number | null;
  /** Ask peers for their revoked ids at start-up, like Celery's mingle (default true). */
  mingle?: boolean;
  /** How long to keep retrying a result write before handing the message back (default 60 s). */
  resultWriteDeadlineMs?: number;
  /**
   * Starts of one task message (per task id and retry, counted by all workers together) after
   * which it is no longer run but parked in the dead-letter queue (default 5).
   */
  maxDeliveries?: number;
  /** Queue for canvas steps (callbacks, chain steps, errbacks) whose signature names none (default `celery`). */
  defaultQueue?: string;
  logger?: Logger;
}

/** WorkerOptions with their defaults. */
export interface WorkerSettings {
  concurrency: number;
  /** The task channel's prefetch window with no result write pending (0 = unlimited). */
  prefetchCount: number;
  trackStarted: boolean;
  sendTaskEvents: boolean;
  shutdownGraceMs: number;
  defaultTimeLimitSeconds: number | null;
  mingle: boolean;
  resultWriteDeadlineMs: number;
  maxDeliveries: number;
  defaultQueue: string;
}

export function workerSettings(options: WorkerOptions): WorkerSettings {
  const concurrency = Math.max(1, options.concurrency ?? 1);
  const multiplier = options.prefetchMultiplier ?? 4;
  return {
    concurrency,
    prefetchCount: multiplier === 0 ? 0 : concurrency * multiplier,
    trackStarted: options.trackStarted ?? false,
    sendTaskEvents: options.sendTaskEvents ?? false,
    shutdownGraceMs: options.shutdownGraceMs ?? 30_000,
    defaultTimeLimitSeconds: options.defaultTimeLimitSeconds ?? null,
    mingle: options.mingle ?? true,
    resultWriteDeadlineMs: options.resultWriteDeadlineMs ?? 60_000,
    maxDeliveries: Math.max(1, options.maxDeliveries ?? 5),
    defaultQueue: options.defaultQueue ?? DEFAULT_QUEUE,
  };
}
