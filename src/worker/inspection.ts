/**
 * What `inspect active` and `inspect stats` report about a worker, in the shapes a Celery 5.2
 * worker replies with (what `celery inspect` and Flower read), built from plain facts so the worker class stays about running tasks.
 */
import { resourceUsage, uptime as processUptime } from 'node:process';
import type { BrokerSettings } from '../config/connections.js';
import type { JsonObject, JsonValue } from '../queue/protocol/json.js';
import type { IncomingTask } from '../queue/protocol/task-message-parser.js';

/** Celery's request info for one running task. */
export function requestInfo(task: IncomingTask, startedAt: Date, nodeName: string): JsonObject {
  return {
    id: task.taskId,
    name: task.taskName,
    args: task.args,
    kwargs: task.kwargs,
    type: task.taskName,
    hostname: nodeName,
    time_start: startedAt.getTime() / 1000,
    acknowledged: false,
    delivery_info: {
      exchange: task.deliveryInfo.exchange,
      routing_key: task.deliveryInfo.routingKey,
      priority: task.deliveryInfo.priority,
      redelivered: task.deliveryInfo.redelivered,
    },
    worker_pid: process.pid,
  };
}

export interface WorkerFacts {
  processedByTask: ReadonlyMap<string, number>;
  clock: number;
  concurrency: number;
  prefetchCount: number;
  defaultTimeLimitSeconds: number | null;
  broker: BrokerSettings;
  brokerConnected: boolean;
}

/** A subset of Celery's `stats`, with its keys where they make sense; never the password. */
export function workerStats(facts: WorkerFacts): JsonObject {
  const usage = resourceUsage();
  const total: { [name: string]: JsonValue } = {};
  let processed = 0;
  for (const [name, count] of facts.processedByTask) {
    total[name] = count;
    processed += count;
  }
  const url = new URL(facts.broker.url);
  return {
    total,
    pid: process.pid,
    clock: String(facts.clock),
    uptime: Math.round(processUptime()),
    pool: {
      'max-concurrency': facts.concurrency,
      processes: [process.pid],
      'max-tasks-per-child': 'N/A',
      'put-guarded-by-semaphore': false,
      timeouts: [0, facts.defaultTimeLimitSeconds ?? 0],
      writes: { total: processed },
    },
    broker: {
      hostname: url.hostname,
      userid: facts.broker.username ?? (decodeURIComponent(url.username) || null),
      virtual_host: decodeURIComponent(url.pathname.replace(/^\//, '')) || '/',
      port: Number(url.port || (url.protocol === 'amqps:' ? 5671 : 5672)),
      transport: 'amqp',
      ssl: url.protocol === 'amqps:',
      heartbeat: facts.broker.heartbeatSeconds,
      connected: facts.brokerConnected,
    },
    prefetch_count: facts.prefetchCount,
    rusage: {
      utime: usage.userCPUTime / 1e6,
      stime: usage.systemCPUTime / 1e6,
      maxrss: usage.maxRSS,
    },
  };
}
