/**
 * Whether a request may run (Celery's `Request.revoked()` and the checks before
 * `execute_using_pool`): not when it was revoked or has expired (REVOKED stored), not when its
 * task already has a final state (a redelivery after its worker lost the broker, or a revoke the
 * API recorded while no worker listened), and not when its message has started too often
 * without finishing (parked in the dead-letter queue). Each refusal settles the request.
 */
import type { ChannelModel } from 'amqplib';
import type { Logger } from 'pino';
import type { TaskQueueType } from '../../config/connections.js';
import { closeChannel } from '../../queue/connection/bounded-close.js';
import { DEAD_LETTER_QUEUE, parkMessage } from '../../queue/dead-letter/dead-letter-queue.js';
import { PythonException, TaskRevokedError, exceptionRepr, toExceptionInfo } from '../../queue/results/exceptions.js';
import type { RequestMeta } from '../../queue/results/result-document.js';
import type { DeliveryCount, ResultStore } from '../../queue/results/result-store.js';
import type { TaskState } from '../../queue/results/states.js';
import type { OutcomeRecorder } from './outcome-recorder.js';
import type { RequestOutcomes, TaskEvents } from './request-outcomes.js';
import { abortable } from '../service-retry.js';
import { requestMeta, type TaskRequest } from './task-request.js';
import type { WorkerSettings } from '../worker-options.js';

/** The reads and writes the checks make in the result store. */
export type StartRecords = Pick<ResultStore, 'isReady' | 'countDelivery'> & {
  finalState(taskId: string): Promise<TaskState | null>;
};

export interface StartChecksOptions {
  nodeName: string;
  logger: Logger;
  /** The store, or null while the database was never reached. */
  records: () => StartRecords | null;
  revoked: { has(taskId: string): boolean };
  recorder: Pick<OutcomeRecorder, 'writeFinal'>;
  outcomes: Pick<RequestOutcomes, 'discard' | 'returnToQueue'>;
  events: TaskEvents;
  /** The broker connection to park messages on, or null while disconnected. */
  connection: () => ChannelModel | null;
  queueType: TaskQueueType | undefined;
  /** Fires when the shutdown's grace period is over: a start count still on its way gives up. */
  graceOver: AbortSignal;
  /** `maxDeliveries`: starts after which a message is parked; `trackStarted`: STARTED stored before a task runs. */
  settings: Pick<WorkerSettings, 'maxDeliveries' | 'trackStarted'>;
}

export class StartChecks {
  constructor(private readonly options: StartChecksOptions) {}

  /**
   * At arrival: a first delivery that only needs to know whether its task already has a final
   * state (see `startCount`) asks now, with the other messages of this delivery burst in one
   * read, so the answer is there when a slot frees up. A revoke the API records after this read
   * reaches this worker by its broadcast (the worker is consuming, so its mailbox is attached).
   */
  readAhead(request: TaskRequest): void {
    if (this.checksFinalStateOnly(request)) request.finalStateRead = this.readFinalState(request);
  }

  /** Why the request must not run any more, or null: known without a wait, so most requests pass on at once. */
  revocation(request: TaskRequest): 'revoked' | 'expired' | null {
    const { task } = request;
    if (task.expires !== null && task.expires.getTime() <= Date.now()) return 'expired';
    return this.options.revoked.has(task.taskId) ? 'revoked' : null;
  }

  /** Revoked or expired: REVOKED stored and the message acknowledged (returned to its queue when it cannot be stored). */
  async discardRevoked(request: TaskRequest, reason: 'revoked' | 'expired'): Promise<void> {
    const { task } = request;
    const expired = reason === 'expired';
    this.options.logger.info({ taskId: task.taskId, task: task.taskName, reason }, 'discarding revoked task');
    try {
      await this.options.recorder.writeFinal(
        task,
        requestMeta(task, this.options.nodeName),
        (store, m) => store.markRevoked(task.taskId, reason, m),
        () => ['revocation', exceptionRepr(toExceptionInfo(new TaskRevokedError(reason)))],
      );
    } catch (error) {
      this.options.logger.error({ err: error, taskId: task.taskId }, 'could not store REVOKED; returning the message');
      this.options.outcomes.returnToQueue(request, 0);
      return;
    }
    this.options.events.sendTaskEvent('task-revoked', { uuid: task.taskId, terminated: false, signum: null, expired });
    this.options.outcomes.discard(request, 'REVOKED');
  }

  /**
   * Right before the body runs, in its slot: true when it may run. Otherwise the request was
   * settled: revoked or expired while it waited, already finished, back to the queue because
   * the worker shut down meanwhile, or parked.
   */
  async mayStart(request: TaskRequest, meta: RequestMeta): Promise<boolean> {
    const revocation = this.revocation(request);
    if (revocation !== null) {
      await this.discardRevoked(request, revocation);
      return false;
    }
    // Only a redelivery can have run before (the check is a database read).
    if (!request.firstDelivery && (await this.dropIfAlreadyFinished(request))) return false;
    const counted = await this.startCount(request, meta);
    if (this.options.graceOver.aborted) {
      // Shut down while counting: not started, so back to the queue without running.
      this.options.outcomes.returnToQueue(request, 0);
      return false;
    }
    if (counted?.finalState != null) {
      this.discardFinished(request, counted.finalState);
      return false;
    }
    const starts = counted?.count ?? null;
    if (starts !== null && starts > this.options.settings.maxDeliveries) {
      await this.park(request, starts, meta);
      return false;
    }
    return true;
  }

  /**
   * A first delivery is not counted as a start before it runs (see `startCount`): it only needs
   * to know whether the task already has a final state. With track_started it writes STARTED
   * all the same, in the counting write.
   */
  private checksFinalStateOnly(request: TaskRequest): boolean {
    return request.firstDelivery && !this.marksStarted(request);
  }

  private marksStarted(request: TaskRequest): boolean {
    return this.options.settings.trackStarted && !(request.definition.ignoreResult || request.task.ignoreResult);
  }

  private readFinalState(request: TaskRequest): Promise<TaskState | null> {
    const store = this.options.records();
    if (store === null) return Promise.resolve(null);
    const read = store.finalState(request.taskId);
    // Asked ahead of time: a failure must not go unhandled if the request never starts.
    read.catch(() => undefined);
    return read;
  }

  /**
   * A redelivered message of a task that already has its final state: the worker that ran it
   * lost its broker connection (e.g. the node died) before its acknowledgement got through.
   * Acknowledged without running again. A redelivery of a task still running elsewhere cannot
   * be told apart from one whose worker died, and runs again (at-least-once).
   */
  private async dropIfAlreadyFinished(request: TaskRequest): Promise<boolean> {
    const { task } = request;
    const store = this.options.records();
    if (store === null) return false;
    const finished = await store.isReady(task.taskId).catch(() => false);
    if (!finished) return false;
    this.options.logger.info(
      { taskId: task.taskId, task: task.taskName },
      'redelivered task already finished; acknowledging without running it again',
    );
    this.options.outcomes.discard(request, 'ALREADY_FINISHED');
    return true;
  }

  /**
   * A task whose result already holds a final state when it is about to start: revoked by the
   * API before any worker heard the revoke (its submitter was deactivated or lost a grant while
   * it waited, with no worker online to hear the broadcast), or finished elsewhere. Acknowledged
   * without running, the state left as it is.
   */
  private discardFinished(request: TaskRequest, state: TaskState): void {
    const { task } = request;
    const revoked = state === 'REVOKED';
    this.options.logger.info({ taskId: task.taskId, task: task.taskName, state }, 'task already has a final state; not running it');
    if (revoked) this.options.events.sendTaskEvent('task-revoked', { uuid: task.taskId, terminated: false, signum: null, expired: false });
    this.options.outcomes.discard(request, revoked ? 'REVOKED' : 'ALREADY_FINISHED');
  }

  /**
   * The starts of this message so far, this one included, or null when they could not be known
   * (the task then runs uncounted, as it did before counting); or the final state the task
   * already has. Counting is what stops a message that keeps killing or stalling its workers.
   *
   * Only redeliveries are written down before they run: a message the broker delivers for the
   * first time (`redelivered` false) has had no start anywhere, so its count is known without a
   * write, and a database round trip before every task body is what bounded a worker at
   * concurrency 1. A redelivered message counts its earlier first delivery as a start: one that
   * went back unstarted (prefetched when its worker stopped) is counted one start too many, at
   * most once, which a task that finishes never notices.
   */
  private async startCount(request: TaskRequest, meta: RequestMeta): Promise<DeliveryCount | null> {
    const { task } = request;
    const { graceOver, logger } = this.options;
    if (this.checksFinalStateOnly(request)) {
      request.finalStateRead ??= this.readFinalState(request);
      try {
        const finalState = await abortable(request.finalStateRead, graceOver);
        return finalState === null ? { count: 1, finalState: null } : { count: null, finalState };
      } catch (error) {
        logger.warn({ err: (error as Error).message, taskId: task.taskId }, 'could not read whether the task already finished; running it');
        return null;
      }
    }
    const store = this.options.records();
    if (store === null) return null;
    const started = this.marksStarted(request) ? { pid: process.pid, hostname: this.options.nodeName } : undefined;
    // A first delivery (with track_started) writes STARTED but adds nothing to the count.
    const increment = request.firstDelivery ? 0 : 1;
    try {
      const counted = await abortable(store.countDelivery(task.taskId, task.retries, meta, started, increment), graceOver);
      return counted.count === null ? counted : { count: counted.count + 1, finalState: null };
    } catch (error) {
      logger.warn({ err: (error as Error).message, taskId: task.taskId }, 'could not count the start of the task; running it uncounted');
      return null;
    }
  }

  /**
   * A message started too often without finishing: copied unchanged into the dead-letter queue
   * (after the broker's confirm), recorded as a FAILURE, and acknowledged, so it stops running.
   * When the copy cannot be made the message goes back to its queue to be tried again.
   */
  private async park(request: TaskRequest, starts: number, meta: RequestMeta): Promise<void> {
    const { task, message } = request;
    const log = this.options.logger.child({ taskId: task.taskId, task: task.taskName });
    const reason = `delivered ${starts} times without finishing; parked in ${DEAD_LETTER_QUEUE}`;
    try {
      const connection = this.options.connection();
      if (connection === null) throw new Error('not connected to the broker');
      const channel = await connection.createConfirmChannel();
      channel.on('error', (error: Error) => log.warn({ err: error.message }, 'dead-letter channel error'));
      try {
        await parkMessage(channel, message, { reason, deliveryCount: starts, queueType: this.options.queueType });
      } finally {
        await closeChannel(channel);
      }
    } catch (error) {
      log.error({ err: error }, 'could not park the message in the dead-letter queue; returning it to its queue');
      this.options.outcomes.returnToQueue(request, 0);
      return;
    }
    log.error({ starts, maxDeliveries: this.options.settings.maxDeliveries }, `task ${reason}`);
    const exception = toExceptionInfo(new PythonException('WorkerLostError', [reason], 'billiard.exceptions'));
    try {
      await this.options.recorder.writeFinal(
        task,
        meta,
        (store, m) => store.markFailure(task.taskId, exception, null, m),
        () => ['exception', exceptionRepr(exception)],
      );
    } catch (error) {
      // The message is safe in the dead-letter queue; running it again is what must not happen.
      log.error({ err: error }, 'could not store the FAILURE of a parked task');
    }
    this.options.events.sendTaskEvent('task-failed', { uuid: task.taskId, exception: exceptionRepr(exception), traceback: null });
    this.options.outcomes.discard(request, 'DEAD_LETTERED');
  }
}
