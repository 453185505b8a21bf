/**
 * Worker settings from the environment, validated once at start-up: the shared MONGO_* and
 * BROKER_* variables plus the WORKER_* and RESULT_* ones documented in WORKER_ENVIRONMENT.
 */
import { availableParallelism, hostname } from 'node:os';
import { z } from 'zod';
import {
  brokerEnvSchema,
  mongoEnvSchema,
  toBrokerSettings,
  toMongoSettings,
  type BrokerSettings,
  type MongoSettings,
} from '../config/connections.js';
import { DEFAULT_RESULT_COLLECTION } from '../queue/results/result-store.js';
import { booleanFlag, commaList, envProblems, setVariables } from '../config/env-values.js';

const list = commaList;
const bool = booleanFlag;

const workerOnlySchema = z.object({
  WORKER_NODE_NAME: z
    .string()
    .trim()
    .regex(/^[^\s@]+@[^\s]+$/, 'must look like name@host')
    .default(`ts-worker@${hostname()}`),
  WORKER_QUEUES: list.default(['celery']).refine((q) => q.length > 0, 'needs at least one queue'),
  WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(1000).default(availableParallelism()),
  WORKER_PREFETCH_MULTIPLIER: z.coerce.number().int().min(0).max(1000).default(4),
  WORKER_TASK_MODULES: list.default([]),
  RESULT_DATABASE: z.string().trim().min(1).default('cybercom'),
  RESULT_COLLECTION: z.string().trim().min(1).default(DEFAULT_RESULT_COLLECTION),
  // Off by default like Celery's task_track_started: one more database write per task.
  WORKER_TRACK_STARTED: bool.default(false),
  WORKER_SEND_TASK_EVENTS: bool.default(false),
  WORKER_SHUTDOWN_GRACE_S: z.coerce.number().min(0).default(30),
  WORKER_MAX_DELIVERIES: z.coerce.number().int().min(1).max(1000).default(5),
  /** 0 = no limit. */
  WORKER_DEFAULT_TIME_LIMIT_S: z.coerce.number().min(0).default(0),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

export const workerEnvSchema = mongoEnvSchema.extend(brokerEnvSchema.shape).extend(workerOnlySchema.shape);

/** Name → meaning, for --help and the operator docs. */
export const WORKER_ENVIRONMENT: Record<string, string> = {
  WORKER_NODE_NAME: 'Node name in remote control and events (default ts-worker@<hostname>)',
  WORKER_QUEUES: 'Comma-separated queues to consume (default celery)',
  WORKER_CONCURRENCY: 'Tasks run at the same time (default: number of CPUs)',
  WORKER_PREFETCH_MULTIPLIER:
    'Unacknowledged messages = concurrency × this, plus one per task whose result is being written (default 4; 0 = unlimited)',
  WORKER_TASK_MODULES: 'Comma-separated task modules: local paths or installed package names',
  RESULT_DATABASE: 'Database of the result collection (default cybercom)',
  RESULT_COLLECTION: 'Celery result collection (default tombstone)',
  WORKER_TRACK_STARTED: 'Store STARTED before a task runs, so the API shows running tasks (default false, as in Celery)',
  WORKER_SEND_TASK_EVENTS: 'Send task events from the start, like celery -E (default false)',
  WORKER_SHUTDOWN_GRACE_S: 'On SIGTERM, how long running tasks may finish (default 30)',
  WORKER_MAX_DELIVERIES: 'Starts of one task message after which it is parked in cybercom.dead_letter instead (default 5)',
  WORKER_DEFAULT_TIME_LIMIT_S: 'Hard time limit for tasks without their own (default 0 = none)',
  LOG_LEVEL: 'pino log level (default info)',
};

export interface WorkerConfig {
  nodeName: string;
  queues: string[];
  concurrency: number;
  prefetchMultiplier: number;
  taskModules: string[];
  resultDatabase: string;
  resultCollection: string;
  trackStarted: boolean;
  sendTaskEvents: boolean;
  shutdownGraceMs: number;
  maxDeliveries: number;
  defaultTimeLimitSeconds: number | null;
  logLevel: string;
  mongo: MongoSettings;
  broker: BrokerSettings;
}

export class WorkerConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid worker configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'WorkerConfigError';
  }
}

export function loadWorkerConfig(env: NodeJS.ProcessEnv = process.env): WorkerConfig {
  const parsed = workerEnvSchema.safeParse(setVariables(env));
  if (!parsed.success) throw new WorkerConfigError(envProblems(parsed.error));
  const e = parsed.data;
  return {
    nodeName: e.WORKER_NODE_NAME,
    queues: e.WORKER_QUEUES,
    concurrency: e.WORKER_CONCURRENCY,
    prefetchMultiplier: e.WORKER_PREFETCH_MULTIPLIER,
    taskModules: e.WORKER_TASK_MODULES,
    resultDatabase: e.RESULT_DATABASE,
    resultCollection: e.RESULT_COLLECTION,
    trackStarted: e.WORKER_TRACK_STARTED,
    sendTaskEvents: e.WORKER_SEND_TASK_EVENTS,
    shutdownGraceMs: Math.round(e.WORKER_SHUTDOWN_GRACE_S * 1000),
    maxDeliveries: e.WORKER_MAX_DELIVERIES,
    defaultTimeLimitSeconds: e.WORKER_DEFAULT_TIME_LIMIT_S > 0 ? e.WORKER_DEFAULT_TIME_LIMIT_S : null,
    logLevel: e.LOG_LEVEL,
    mongo: toMongoSettings(e),
    broker: toBrokerSettings(e),
  };
}
