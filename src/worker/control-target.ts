/**
 * What remote control sees of a running worker (see control-commands.ts): its registry, its
 * revoked ids, the requests it runs, its stats, its event switch and its logical clock.
 */
import type { Logger } from 'pino';
import { TaskRevokedError } from '../queue/results/exceptions.js';
import type { TaskQueueType } from '../config/connections.js';
import type { ControlTarget } from './control-commands.js';
import { requestInfo, workerStats, type WorkerFacts } from './inspection.js';
import type { RevokedSet } from './revoked-set.js';
import type { RunningTasks } from './running-tasks.js';
import type { TaskRegistry } from './task-registry.js';
import type { WorkerSettings } from './worker-options.js';

/** The worker's Lamport clock (kombu's LamportClock): advanced by every event it sends, moved past its peers'. */
export class LogicalClock {
  private current = 0;

  get value(): number {
    return this.current;
  }

  tick(): number {
    this.current += 1;
    return this.current;
  }

  adjust(peer: number): void {
    if (peer > 0) this.current = Math.max(this.current, peer) + 1;
  }
}

export interface ControlTargetParts {
  nodeName: string;
  queues: readonly string[];
  queueType: TaskQueueType | undefined;
  registry: TaskRegistry;
  revoked: RevokedSet;
  running: RunningTasks;
  clock: LogicalClock;
  /** The worker's event dispatcher: `enable_events` switches its task events. */
  events: { taskEventsEnabled: boolean };
  settings: Pick<WorkerSettings, 'concurrency' | 'prefetchCount' | 'defaultTimeLimitSeconds'>;
  /** The facts of `stats` that change. */
  stats: () => Pick<WorkerFacts, 'processedByTask' | 'broker' | 'brokerConnected'>;
  sendHeartbeat: () => void;
  logger: Logger;
}

export function controlTarget(parts: ControlTargetParts): ControlTarget {
  const { nodeName, registry, revoked, running, clock, events, logger } = parts;
  return {
    nodeName,
    queues: parts.queues,
    queueType: parts.queueType,
    registeredReply: (items) => registry.registeredReply(items),
    taskInfoReply: () => registry.taskInfoReply(),
    revoke: (ids, terminate) => {
      for (const id of ids) revoked.add(id);
      logger.info({ ids, terminate }, 'tasks revoked');
      if (!terminate) return [];
      const stopped: string[] = [];
      for (const id of ids) {
        const entry = running.get(id);
        if (entry === undefined) continue;
        entry.execution.stop(new TaskRevokedError('terminated'));
        stopped.push(id);
      }
      return stopped;
    },
    revokedIds: () => revoked.ids(),
    helloPayload: () => revoked.toHelloPayload(),
    mergeRevoked: (payload) => revoked.mergeHelloPayload(payload),
    activeRequests: () => [...running.values()].map((entry) => requestInfo(entry.request.task, entry.startedAt, nodeName)),
    stats: () => {
      const { concurrency, prefetchCount, defaultTimeLimitSeconds } = parts.settings;
      return workerStats({ ...parts.stats(), clock: clock.value, concurrency, prefetchCount, defaultTimeLimitSeconds });
    },
    sendHeartbeat: parts.sendHeartbeat,
    get taskEventsEnabled() {
      return events.taskEventsEnabled;
    },
    set taskEventsEnabled(value: boolean) {
      events.taskEventsEnabled = value;
    },
    clock: () => clock.tick(),
    adjustClock: (peer) => clock.adjust(peer),
  };
}
