/**
 * The requests running on this worker, by task id, from the moment one takes a pool slot until
 * its message is settled: what revoke with terminate, `active`, the heartbeat and the shutdown
 * see. The shutdown waits until none is left.
 */
import { sleep } from './service-retry.js';
import { WorkerShutdown, type TaskExecution } from './request/task-execution.js';
import type { TaskRequest } from './request/task-request.js';

export interface RunningTask {
  request: TaskRequest;
  execution: TaskExecution;
  startedAt: Date;
}

export class RunningTasks {
  private readonly byId = new Map<string, RunningTask>();
  /** Resolved (and emptied) when the last running task ends. */
  private readonly idleWaiters: (() => void)[] = [];

  get size(): number {
    return this.byId.size;
  }

  get(taskId: string): RunningTask | undefined {
    return this.byId.get(taskId);
  }

  add(entry: RunningTask): void {
    this.byId.set(entry.request.taskId, entry);
  }

  remove(taskId: string): void {
    this.byId.delete(taskId);
    if (this.byId.size === 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  values(): IterableIterator<RunningTask> {
    return this.byId.values();
  }

  ids(): string[] {
    return [...this.byId.keys()];
  }

  /** Resolves once no task runs. */
  whenIdle(): Promise<void> {
    if (this.byId.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Resolves once no task runs. Past `graceMs`, `abandon` is told which still run, and each is
   * stopped with WorkerShutdown: their messages stay unacknowledged, so the broker redelivers them.
   */
  async finishWithin(graceMs: number, abandon: (ids: string[]) => void): Promise<void> {
    const idle = this.whenIdle();
    const inTime = await Promise.race([idle.then(() => true), sleep(graceMs).then(() => false)]);
    if (inTime) return;
    abandon(this.ids());
    for (const entry of this.byId.values()) entry.execution.stop(new WorkerShutdown());
    await idle;
  }
}
