/**
 * What happens to a request once its task body is done (Celery's `Request.on_success`,
 * `on_failure`, `on_retry`): the next messages are sent, the outcome is stored, the event goes
 * out, and only then is the message acknowledged (late ack). Whatever cannot be done (the broker
 * refuses a callback, the database stays down) hands the message back to its queue instead, so
 * the task runs again; every path ends the request with exactly one settlement and one report.
 */
import type { ResultStore } from '../../queue/results/result-store.js';
import type { Logger } from 'pino';
import type { JsonObject } from '../../queue/protocol/json.js';
import type { TaskEventType } from '../../queue/protocol/events.js';
import { toJsonValue } from '../../queue/protocol/python-json.js';
import { pythonRepr } from '../../queue/protocol/python-repr.js';
import type { PublishTaskInput } from '../../queue/publishing/task-publisher.js';
import {
  TaskRevokedError,
  exceptionRepr,
  formatTraceback,
  toExceptionInfo,
  type CeleryExceptionInfo,
} from '../../queue/results/exceptions.js';
import type { RequestMeta } from '../../queue/results/result-document.js';
import type { TaskState } from '../../queue/results/states.js';
import { InvalidSignatureError, chainTaskIds } from '../canvas.js';
import { errbackSteps, retryMessage, successSteps } from './follow-up-messages.js';
import type { OutcomeRecorder, StoredAs } from './outcome-recorder.js';
import type { TaskOutcome } from './task-execution.js';
import { requestMeta, type TaskRequest } from './task-request.js';
import type { Retry } from './task-retry.js';
import type { WorkerSettings } from '../worker-options.js';

/** What happened to one task message, for listeners and tests. */
export interface TaskReport {
  taskId: string;
  taskName: string;
  state: TaskState | 'NOT_REGISTERED' | 'REJECTED' | 'REQUEUED' | 'DEAD_LETTERED' | 'ALREADY_FINISHED';
  runtimeMs: number;
}

/** Where task events go (the worker's EventDispatcher). */
export interface TaskEvents {
  readonly taskEventsEnabled: boolean;
  sendTaskEvent(type: TaskEventType, fields: JsonObject): boolean;
}

export interface RequestOutcomesOptions {
  nodeName: string;
  /** `defaultQueue`: for callbacks, chain steps, errbacks and retries whose signature or message names none. */
  settings: Pick<WorkerSettings, 'defaultQueue'>;
  logger: Logger;
  recorder: Pick<OutcomeRecorder, 'write' | 'writeFinal'>;
  /** Removes the start count of a task whose result is not kept. */
  forgetDeliveries: (taskId: string) => Promise<unknown>;
  events: TaskEvents;
  /** Sends one message, resolved once the broker confirmed it. */
  publish: (message: PublishTaskInput) => Promise<unknown>;
  report: (report: TaskReport) => void;
}

type Failure = { exception: CeleryExceptionInfo; traceback: string };

export class RequestOutcomes {
  /** Tasks that ran to an outcome, by task name (Celery's `total` in `stats`). */
  readonly processed = new Map<string, number>();

  constructor(private readonly options: RequestOutcomesOptions) {}

  /** Tasks that ran to an outcome, all names together. */
  get processedTotal(): number {
    let total = 0;
    for (const count of this.processed.values()) total += count;
    return total;
  }

  /** Ends a request whose body ran: records `outcome` and settles the message. */
  finish(request: TaskRequest, outcome: TaskOutcome, meta: RequestMeta, storesResults: boolean): Promise<void> {
    switch (outcome.state) {
      case 'ABANDONED':
        this.log(request).warn('task abandoned at shutdown; returning it to the queue');
        this.returnToQueue(request, outcome.runtimeMs);
        return Promise.resolve();
      case 'RETRY':
        return this.onRetry(request, outcome.retry, meta, storesResults, outcome.runtimeMs);
      case 'SUCCESS':
        return this.onSuccess(request, outcome.value, meta, storesResults, outcome.runtimeMs);
      case 'FAILURE':
        return this.onFailure(request, outcome, meta, outcome.runtimeMs);
      case 'REVOKED':
        return this.onTerminated(request, meta, outcome.runtimeMs);
    }
  }

  /** The message goes back to its queue to run again (on this worker or another), reported REQUEUED. */
  returnToQueue(request: TaskRequest, runtimeMs: number): void {
    request.requeue();
    this.report(request, 'REQUEUED', runtimeMs);
  }

  /** Acknowledged with its outcome stored: counted as processed and reported as `state`. */
  complete(request: TaskRequest, state: TaskReport['state'], runtimeMs: number): void {
    request.ack();
    const name = request.task.taskName;
    this.processed.set(name, (this.processed.get(name) ?? 0) + 1);
    this.report(request, state, runtimeMs);
  }

  /** Acknowledged without running (revoked, expired, already finished, dead-lettered), reported as `state`. */
  discard(request: TaskRequest, state: TaskReport['state']): void {
    request.ack();
    this.report(request, state, 0);
  }

  private report(request: TaskRequest, state: TaskReport['state'], runtimeMs: number): void {
    this.options.report({ taskId: request.task.taskId, taskName: request.task.taskName, state, runtimeMs });
  }

  /**
   * Like Celery, the next steps are sent before the result is stored, so a reader that sees
   * SUCCESS can already find them. Not sent (broker down): the task runs again.
   */
  private async onSuccess(
    request: TaskRequest,
    value: unknown,
    meta: RequestMeta,
    storesResults: boolean,
    runtimeMs: number,
  ): Promise<void> {
    const { task } = request;
    try {
      await this.publishAll(successSteps(task, value, this.options.settings.defaultQueue));
    } catch (error) {
      if (!(error instanceof InvalidSignatureError)) {
        this.log(request).error({ err: error }, 'could not send the callbacks or next chain step; returning the message so it runs again');
        this.returnToQueue(request, runtimeMs);
        return;
      }
      this.log(request).error({ err: error.message }, 'the task message carries an unusable canvas; the task fails');
      await this.onFailure(request, { exception: toExceptionInfo(error), traceback: '' }, meta, runtimeMs);
      return;
    }
    // Only the start count was written for a task whose result is not kept: remove it.
    if (!storesResults && !request.firstDelivery) void this.options.forgetDeliveries(task.taskId).catch(() => undefined);
    if (
      storesResults &&
      !(await this.storeFinal(
        request,
        meta,
        runtimeMs,
        (store, m) => store.markSuccess(task.taskId, value, m),
        () => ['result', pythonRepr(toJsonValue(value))],
      ))
    )
      return;
    const runtime = runtimeMs / 1000;
    if (this.options.logger.isLevelEnabled('info')) this.log(request).info({ runtime }, 'task succeeded');
    if (this.options.events.taskEventsEnabled)
      this.options.events.sendTaskEvent('task-succeeded', { uuid: task.taskId, result: pythonRepr(toJsonValue(value)), runtime });
    this.complete(request, 'SUCCESS', runtimeMs);
  }

  private async onFailure(request: TaskRequest, failure: Failure, meta: RequestMeta, runtimeMs: number): Promise<void> {
    const { task } = request;
    const stored = await this.storeFinal(
      request,
      meta,
      runtimeMs,
      (store, m) => store.markFailure(task.taskId, failure.exception, failure.traceback, m),
      () => ['exception', exceptionRepr(failure.exception)],
    );
    if (!stored) return;
    if (!(await this.afterFailure(request, failure.exception, runtimeMs))) return;
    this.log(request).warn({ runtime: runtimeMs / 1000, exception: exceptionRepr(failure.exception) }, 'task failed');
    this.options.events.sendTaskEvent('task-failed', {
      uuid: task.taskId,
      exception: exceptionRepr(failure.exception),
      traceback: failure.traceback,
    });
    this.complete(request, 'FAILURE', runtimeMs);
  }

  /** Stopped by a revoke with terminate. */
  private async onTerminated(request: TaskRequest, meta: RequestMeta, runtimeMs: number): Promise<void> {
    const { task } = request;
    const stored = await this.storeFinal(
      request,
      meta,
      runtimeMs,
      (store, m) => store.markRevoked(task.taskId, 'terminated', m),
      () => ['revocation', exceptionRepr(toExceptionInfo(new TaskRevokedError('terminated')))],
    );
    if (!stored) return;
    this.log(request).info('task terminated by revoke');
    this.options.events.sendTaskEvent('task-revoked', { uuid: task.taskId, terminated: true, signum: 15, expired: false });
    this.complete(request, 'REVOKED', runtimeMs);
  }

  /**
   * Stores a final state (OutcomeRecorder.writeFinal). True when it was stored; otherwise the
   * request has already been ended: returned to its queue when nothing could be stored, or ended
   * as the FAILURE the database kept instead when it refused the outcome itself.
   */
  private async storeFinal(
    request: TaskRequest,
    meta: RequestMeta,
    runtimeMs: number,
    write: (store: ResultStore, meta: RequestMeta) => Promise<void>,
    refused: () => [what: string, repr: string],
  ): Promise<boolean> {
    let stored: StoredAs;
    try {
      stored = await this.options.recorder.writeFinal(request.task, meta, write, refused);
    } catch (error) {
      this.notStored(request, error, runtimeMs);
      return false;
    }
    if (typeof stored === 'object') {
      await this.onRefused(request, stored, runtimeMs);
      return false;
    }
    return true;
  }

  /** The outcome itself was refused by the database; what was stored instead is a FAILURE saying so. */
  private async onRefused(request: TaskRequest, stored: { replacedBy: CeleryExceptionInfo }, runtimeMs: number): Promise<void> {
    if (!(await this.afterFailure(request, stored.replacedBy, runtimeMs))) return;
    const exception = exceptionRepr(stored.replacedBy);
    this.options.events.sendTaskEvent('task-failed', { uuid: request.task.taskId, exception, traceback: null });
    this.complete(request, 'FAILURE', runtimeMs);
  }

  /**
   * `ctx.retry()`: the same message again (same id, retries + 1, eta), sent before RETRY is
   * stored and the current message acknowledged, as Celery does. Not sent: the message goes
   * back to the queue and the task runs again now.
   */
  private async onRetry(request: TaskRequest, retry: Retry, meta: RequestMeta, storesResults: boolean, runtimeMs: number): Promise<void> {
    const { task } = request;
    const log = this.log(request);
    try {
      await this.options.publish(retryMessage(task, retry, this.options.settings.defaultQueue));
    } catch (error) {
      log.error({ err: error }, 'could not send the retry; returning the message so it runs again');
      this.returnToQueue(request, runtimeMs);
      return;
    }
    const exception = retry.exc === null ? null : toExceptionInfo(retry.exc);
    const traceback = retry.exc === null ? null : formatTraceback(retry.exc);
    if (storesResults) {
      await this.options.recorder
        .write(task.taskId, (store) => store.markRetry(task.taskId, exception, traceback, meta))
        .catch((error: unknown) =>
          // The retry is on its way; only the intermediate state is missing.
          log.warn({ err: error }, 'could not store RETRY'),
        );
    }
    log.info({ retries: task.retries + 1, eta: retry.when.toISOString() }, 'task retry scheduled');
    this.options.events.sendTaskEvent('task-retried', {
      uuid: task.taskId,
      exception: exception ? exceptionRepr(exception) : 'Retry()',
      traceback,
    });
    request.ack();
    this.report(request, 'RETRY', runtimeMs);
  }

  /** The outcome could not be stored (see OutcomeRecorder.writeFinal): the message goes back to its queue. */
  private notStored(request: TaskRequest, error: unknown, runtimeMs: number): void {
    this.log(request).error({ err: error }, 'could not store the task outcome; returning the message so it runs again');
    this.returnToQueue(request, runtimeMs);
  }

  /**
   * After a FAILURE, as Celery's backend does: the chain's remaining steps are stored as failed
   * too (so whoever waits on the last one hears of it), then the errbacks get the failed task's
   * id. Celery runs errbacks that take (request, exc, traceback) inside its own process; that
   * request cannot reach another process, so here every errback is sent as a task, the way
   * Celery sends the errbacks it does not have itself. False when that could not be done: the
   * message has gone back to its queue.
   */
  private async afterFailure(request: TaskRequest, exception: CeleryExceptionInfo, runtimeMs: number): Promise<boolean> {
    const { task } = request;
    try {
      const meta = { ...requestMeta(task, this.options.nodeName), name: null, args: null, kwargs: null };
      for (const id of chainTaskIds(task.embed.chain)) {
        await this.options.recorder.write(id, (store) => store.markFailure(id, exception, null, meta));
      }
      let errbacks: PublishTaskInput[];
      try {
        errbacks = errbackSteps(task, this.options.settings.defaultQueue);
      } catch (error) {
        if (!(error instanceof InvalidSignatureError)) throw error;
        this.options.logger.error({ err: error.message, taskId: task.taskId }, 'unusable errbacks; not sent');
        return true;
      }
      await this.publishAll(errbacks);
      return true;
    } catch (error) {
      this.log(request).error({ err: error }, 'could not send the errbacks; returning the message so it runs again');
      this.returnToQueue(request, runtimeMs);
      return false;
    }
  }

  /** Sends messages one after the other, each confirmed by the broker. */
  async publishAll(messages: PublishTaskInput[]): Promise<void> {
    for (const message of messages) await this.options.publish(message);
  }

  /** A child logger per task costs more than a no-op task on a busy worker: made only on paths that log. */
  private log(request: TaskRequest): Logger {
    return this.options.logger.child({ taskId: request.task.taskId, task: request.task.taskName });
  }
}
