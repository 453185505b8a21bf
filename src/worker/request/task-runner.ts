/**
 * Runs a request in the pool slot it was given (Celery's `Request.execute_using_pool` and the
 * tracer around the task): the start checks, the body with its time limits and context, then the
 * outcome flow. The slot is released as soon as the body is done, so the next task runs while
 * this one's outcome is written; the request stays among the running ones until its message is
 * settled.
 */
import type { Logger } from 'pino';
import { decodeSubmitterAccess } from '../../queue/protocol/submitter-access.js';
import type { DataStore } from '../data-store.js';
import type { RequestOutcomes, TaskEvents } from './request-outcomes.js';
import type { RunningTasks } from '../running-tasks.js';
import type { StartChecks } from './start-checks.js';
import { TaskExecution, type TaskOutcome, type TimeLimits } from './task-execution.js';
import { requestMeta, type TaskRequest } from './task-request.js';
import { requestRetry } from './task-retry.js';
import type { WorkerSettings } from '../worker-options.js';

export interface TaskRunnerOptions {
  nodeName: string;
  logger: Logger;
  running: RunningTasks;
  checks: Pick<StartChecks, 'mayStart'>;
  outcomes: Pick<RequestOutcomes, 'finish'>;
  events: TaskEvents;
  /** The tasks' data store (what `ctx.dataStore` is made from), null while the database was never reached. */
  dataStore: () => DataStore | null;
  /** `defaultTimeLimitSeconds`: the hard time limit of tasks without their own (null = none). */
  settings: Pick<WorkerSettings, 'defaultTimeLimitSeconds'>;
  /** Submits the request to the pool again after `delayMs`. */
  runLater: (request: TaskRequest, delayMs: number) => void;
}

export class TaskRunner {
  constructor(private readonly options: TaskRunnerOptions) {}

  async execute(request: TaskRequest, release: () => void): Promise<void> {
    const { task, definition } = request;
    const { running, logger, nodeName } = this.options;
    const runningCopy = running.get(task.taskId);
    if (runningCopy !== undefined) {
      release();
      if (runningCopy.request.isCopyOf(task)) runningCopy.request.addDuplicate(request.delivery);
      // The retry of a task whose previous run is still being recorded: wait for it to finish.
      else this.options.runLater(request, 50);
      return;
    }
    const execution = new TaskExecution();
    running.add({ request, execution, startedAt: new Date() });
    try {
      const meta = requestMeta(task, nodeName);
      if (!(await this.options.checks.mayStart(request, meta))) return;
      const storesResults = !(definition.ignoreResult || task.ignoreResult);
      this.options.events.sendTaskEvent('task-started', { uuid: task.taskId });

      let outcome: TaskOutcome;
      try {
        outcome = await execution.run(
          definition,
          {
            taskId: task.taskId,
            taskName: task.taskName,
            authenticatedUser: task.authenticatedUser,
            args: task.args,
            kwargs: task.kwargs,
            headers: task.customHeaders,
            retries: task.retries,
            rootId: task.rootId,
            parentId: task.parentId,
            retry: (options) => requestRetry(task, definition, options),
            hostname: nodeName,
            dataStore: this.dataStore().forTask(decodeSubmitterAccess(task.customHeaders, task.authenticatedUser)),
            logger: logger.child({ task: task.taskName, taskId: task.taskId }),
          },
          this.timeLimits(request),
        );
      } finally {
        release();
      }
      // Done running, not yet acknowledged: its message gets room beside the prefetch window
      // until it is settled, so the tasks behind it are not held back by its result write.
      request.startRecording();
      try {
        await this.options.outcomes.finish(request, outcome, meta, storesResults);
      } finally {
        request.stopRecording();
      }
    } finally {
      release();
      running.remove(task.taskId);
    }
  }

  private dataStore(): DataStore {
    const store = this.options.dataStore();
    if (store === null) throw new Error('data store not connected');
    return store;
  }

  private timeLimits(request: TaskRequest): TimeLimits {
    // The message's limits win over the task's, as in Celery.
    const { task, definition } = request;
    return {
      hardSeconds: task.timeLimit.hard ?? definition.timeLimitSeconds ?? this.options.settings.defaultTimeLimitSeconds,
      softSeconds: task.timeLimit.soft ?? definition.softTimeLimitSeconds,
    };
  }
}
