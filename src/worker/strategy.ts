/**
 * Celery's task strategy: what one consumed message is to the worker. A message that is not a
 * task message is refused (and never requeued, so it cannot loop); a task nobody registered is
 * refused with a stored NotRegistered failure; anything else becomes a request, which is dropped
 * when revoked or expired, held when it has an ETA, and otherwise handed to the pool.
 */
import type { ConsumeMessage } from 'amqplib';
import type { Logger } from 'pino';
import { pythonRepr } from '../queue/protocol/python-repr.js';
import { parseTaskMessage, type IncomingTask, type RejectedMessage } from '../queue/protocol/task-message-parser.js';
import { formatCeleryTimestamp } from '../queue/protocol/timestamps.js';
import { NotRegistered, exceptionRepr, toExceptionInfo } from '../queue/results/exceptions.js';
import type { EtaSchedule } from './eta-schedule.js';
import type { OutcomeRecorder } from './request/outcome-recorder.js';
import type { TaskEvents, TaskReport } from './request/request-outcomes.js';
import type { RunningTasks } from './running-tasks.js';
import type { StartChecks } from './request/start-checks.js';
import type { TaskDefinition } from './task-definition.js';
import { TaskRequest, requestMeta, type Delivery } from './request/task-request.js';

export type Received =
  | ({ kind: 'invalid' } & RejectedMessage)
  | { kind: 'unregistered'; task: IncomingTask }
  | { kind: 'task'; task: IncomingTask; definition: TaskDefinition };

export function receiveMessage(message: ConsumeMessage, lookup: (taskName: string) => TaskDefinition | undefined): Received {
  const parsed = parseTaskMessage(message);
  if (!parsed.ok) {
    const { ok: _ok, ...rejected } = parsed;
    return { kind: 'invalid', ...rejected };
  }
  const definition = lookup(parsed.task.taskName);
  if (definition === undefined) return { kind: 'unregistered', task: parsed.task };
  return { kind: 'task', task: parsed.task, definition };
}

export interface TaskStrategyOptions {
  nodeName: string;
  logger: Logger;
  lookup: (taskName: string) => TaskDefinition | undefined;
  /** True once the worker stops taking tasks: what arrives then goes straight back. */
  closing: () => boolean;
  running: Pick<RunningTasks, 'get'>;
  checks: Pick<StartChecks, 'revocation' | 'discardRevoked' | 'readAhead'>;
  recorder: Pick<OutcomeRecorder, 'write'>;
  events: TaskEvents;
  eta: Pick<EtaSchedule, 'hold'>;
  /** Hands a request to the pool. */
  submit: (request: TaskRequest) => void;
  report: (report: TaskReport) => void;
}

export class TaskStrategy {
  constructor(private readonly options: TaskStrategyOptions) {}

  /** Handles one delivery; a failure nobody expected returns the message to its queue. */
  onDelivery(delivery: Delivery): void {
    void this.receive(delivery).catch((error: unknown) => {
      this.options.logger.error({ err: error }, 'unexpected error handling a message; returning it to the queue');
      delivery.acks.settle(delivery.message, 'requeue');
    });
  }

  private async receive(delivery: Delivery): Promise<void> {
    const { message, acks } = delivery;
    const { events, running } = this.options;
    if (this.options.closing()) {
      acks.settle(message, 'requeue');
      return;
    }
    const received = receiveMessage(message, this.options.lookup);
    if (received.kind === 'invalid') {
      // Celery drops such messages (reject, no requeue) so they cannot loop.
      const { reason, detail, taskId } = received;
      this.options.logger.error({ reason, detail, taskId }, 'refusing invalid task message');
      acks.settle(message, 'reject');
      this.options.report({ taskId: received.taskId ?? '', taskName: received.taskName ?? '', state: 'REJECTED', runtimeMs: 0 });
      return;
    }
    if (received.kind === 'unregistered') {
      await this.refuseUnregistered(delivery, received.task);
      return;
    }
    const { task } = received;
    const runningCopy = running.get(task.taskId);
    // A retry (same id, higher retries) is a new message, not a copy of the running one.
    if (runningCopy !== undefined && runningCopy.request.isCopyOf(task)) {
      // A redelivery of a task still running here (we reconnected): settle it with the original.
      runningCopy.request.addDuplicate(delivery);
      return;
    }
    const request = new TaskRequest(delivery, task, received.definition);
    const revocation = this.options.checks.revocation(request);
    if (revocation !== null) {
      await this.options.checks.discardRevoked(request, revocation);
      return;
    }

    if (events.taskEventsEnabled)
      events.sendTaskEvent('task-received', {
        uuid: task.taskId,
        name: task.taskName,
        args: task.argsrepr ?? pythonRepr(task.args),
        kwargs: task.kwargsrepr ?? pythonRepr(task.kwargs),
        root_id: task.rootId,
        parent_id: task.parentId,
        retries: task.retries,
        eta: task.eta ? formatCeleryTimestamp(task.eta) : null,
        expires: task.expires ? formatCeleryTimestamp(task.expires) : null,
      });

    const delayMs = task.eta ? task.eta.getTime() - Date.now() : 0;
    if (delayMs > 0) this.options.eta.hold(request, delayMs);
    else {
      this.options.checks.readAhead(request);
      this.options.submit(request);
    }
  }

  /** Unknown task: FAILURE(NotRegistered) stored and the message rejected, as Celery does. */
  private async refuseUnregistered(delivery: Delivery, task: IncomingTask): Promise<void> {
    const { logger } = this.options;
    logger.error({ task: task.taskName, taskId: task.taskId }, 'received unregistered task; rejecting');
    const exception = toExceptionInfo(new NotRegistered(task.taskName));
    await this.options.recorder
      .write(task.taskId, (store) => store.markFailure(task.taskId, exception, null, requestMeta(task, this.options.nodeName)))
      .catch((error: unknown) => logger.error({ err: error, taskId: task.taskId }, 'could not store NotRegistered failure'));
    this.options.events.sendTaskEvent('task-failed', { uuid: task.taskId, exception: exceptionRepr(exception), traceback: null });
    delivery.acks.settle(delivery.message, 'reject');
    this.options.report({ taskId: task.taskId, taskName: task.taskName, state: 'NOT_REGISTERED', runtimeMs: 0 });
  }
}
