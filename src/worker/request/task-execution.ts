/**
 * Runs one task body with its time limits and stop requests, and turns whatever happens into an
 * outcome the worker records. JavaScript cannot kill a running function, so "stopping" means:
 * fire the task's AbortSignal, record the outcome at once, and stop waiting for the body.
 */
import {
  PythonException,
  SoftTimeLimitExceeded,
  TaskRevokedError,
  TimeLimitExceeded,
  formatTraceback,
  toExceptionInfo,
  type CeleryExceptionInfo,
} from '../../queue/results/exceptions.js';
import { pythonJsonDumps } from '../../queue/protocol/python-json.js';
import type { TaskContext, TaskDefinition } from '../task-definition.js';
import { Retry } from './task-retry.js';

/** The worker is shutting down and its grace period is over: the message goes back to the queue. */
export class WorkerShutdown extends Error {
  constructor() {
    super('worker shutting down');
    this.name = 'WorkerShutdown';
  }
}

/** A return value that JSON cannot carry (Celery reports kombu's EncodeError). */
export class EncodeError extends PythonException {
  constructor(message: string) {
    super('EncodeError', [message], 'kombu.exceptions');
  }
}

export interface TimeLimits {
  hardSeconds: number | null;
  softSeconds: number | null;
}

export type TaskOutcome =
  | { state: 'SUCCESS'; value: unknown; runtimeMs: number }
  | { state: 'FAILURE'; error: unknown; exception: CeleryExceptionInfo; traceback: string; runtimeMs: number }
  | { state: 'REVOKED'; reason: 'terminated'; runtimeMs: number }
  /** The task asked to run again (ctx.retry). */
  | { state: 'RETRY'; retry: Retry; runtimeMs: number }
  /** Stopped by shutdown: nothing is recorded and the message is not acknowledged. */
  | { state: 'ABANDONED'; runtimeMs: number };

export class TaskExecution {
  private readonly controller = new AbortController();
  private abandon: (reason: Error) => void = () => undefined;
  private readonly abandoned = new Promise<never>((_, reject) => {
    this.abandon = reject;
  });
  private stoppedWith: Error | null = null;

  constructor() {
    // Settled only through a race; never let it surface as an unhandled rejection.
    this.abandoned.catch(() => undefined);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get stopReason(): Error | null {
    return this.stoppedWith;
  }

  /** Asks the task to stop (soft limit); it keeps running until it returns or is stopped. */
  interrupt(reason: Error): void {
    if (!this.controller.signal.aborted) this.controller.abort(reason);
  }

  /** Stops waiting for the task (hard limit, terminate, shutdown); the first reason wins. */
  stop(reason: Error): void {
    if (this.stoppedWith !== null) return;
    this.stoppedWith = reason;
    this.interrupt(reason);
    this.abandon(reason);
  }

  async run(definition: TaskDefinition, ctx: Omit<TaskContext, 'signal'>, limits: TimeLimits): Promise<TaskOutcome> {
    const started = performance.now();
    const elapsed = (): number => Math.round(performance.now() - started);
    const timers: NodeJS.Timeout[] = [];
    if (limits.softSeconds !== null && (limits.hardSeconds === null || limits.softSeconds < limits.hardSeconds)) {
      const soft = limits.softSeconds;
      timers.push(setTimeout(() => this.interrupt(new SoftTimeLimitExceeded(soft)), soft * 1000));
    }
    if (limits.hardSeconds !== null) {
      const hard = limits.hardSeconds;
      timers.push(setTimeout(() => this.stop(new TimeLimitExceeded(hard)), hard * 1000));
    }

    try {
      const body = Promise.resolve().then(() => definition.run({ ...ctx, signal: this.signal }, ...ctx.args));
      body.catch(() => undefined); // it may settle after we stopped waiting
      const value = await Promise.race([body, this.abandoned]);
      try {
        pythonJsonDumps(value);
      } catch (error) {
        return failure(new EncodeError(`task result is not JSON serializable: ${(error as Error).message}`), elapsed());
      }
      return { state: 'SUCCESS', value, runtimeMs: elapsed() };
    } catch (error) {
      const stopped = this.stoppedWith;
      if (stopped instanceof WorkerShutdown) return { state: 'ABANDONED', runtimeMs: elapsed() };
      if (stopped instanceof TaskRevokedError) return { state: 'REVOKED', reason: 'terminated', runtimeMs: elapsed() };
      if (stopped === null && error instanceof Retry) return { state: 'RETRY', retry: error, runtimeMs: elapsed() };
      return failure(stopped ?? error, elapsed());
    } finally {
      for (const timer of timers) clearTimeout(timer);
    }
  }
}

function failure(error: unknown, runtimeMs: number): TaskOutcome {
  return { state: 'FAILURE', error, exception: toExceptionInfo(error), traceback: formatTraceback(error), runtimeMs };
}
