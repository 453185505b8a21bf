/**
 * The task-queue endpoints declared in route-table.ts (the dead letters: dead-letter-routes.ts).
 * A run is shown to its submitter, task admins and superusers; `?wait=<s>` holds the answer of a
 * run's page until the run finished.
 */
import { Router, type Request } from 'express';
import { pathOf, serve } from '../../http/route-table.js';
import type { Principal } from '../../auth/principal.js';
import { isAuthenticated } from '../../auth/principal.js';
import { canRunTask, isTaskAdmin } from '../../auth/permissions.js';
import { badRequest, forbidden, notFound, unauthenticated, unavailable, type ApiError } from '../../errors.js';
import { absoluteUrl } from '../../http/base-url.js';
import { paginate } from '../../http/paginate.js';
import { parsePaging } from '../../http/paging.js';
import { queryOf } from '../../http/params.js';
import { respond } from '../../http/respond.js';
import { setPageForm } from '../../render/html-forms.js';
import { isTaskState, READY_STATES, type TaskState } from '../results/states.js';
import type { TaskResult } from '../results/result-document.js';
import type { Settings } from '../../config/settings.js';
import { TASK_ID, type QueueService } from './queue-service.js';
import { defaultQueue, signatureJson, type CatalogTask } from './task-catalog.js';
import type { TaskLogEntry } from './task-log.js';
import { parseSubmission, parseWait, validateTaskName } from './submission.js';
import { exampleTokenKey } from './example-token.js';
import { submitterAccessOf } from '../protocol/submitter-access.js';
import { mountDeadLetterRoutes } from './dead-letter-routes.js';
import { mountScheduleRoutes } from '../schedules/schedule-routes.js';
import type { ScheduleService } from '../schedules/schedule-service.js';
import { QUEUE_ROUTES } from './route-table.js';

/** The caller's account: its id (what the history is kept by) and its name now. */
function requireUser(p: Principal): { id: string; name: string } {
  if (!isAuthenticated(p) || p.username === null || p.userId === null) throw unauthenticated();
  return { id: p.userId, name: p.username };
}

/** A run as the history and the run's own page show it; the page also names the submitter. */
function taskRow(entry: TaskLogEntry, status: string, withUser: boolean): Record<string, unknown> {
  return {
    task_id: entry.task_id,
    task_name: entry.task_name,
    status,
    ...(withUser ? { user: entry.user } : {}),
    args: entry.args,
    kwargs: entry.kwargs,
    queue: entry.queue,
    tags: entry.tags,
    timestamp: entry.timestamp,
  };
}

/** Links to the queue's pages, under the path the app mounts the queue at. */
class QueueUrls {
  constructor(private readonly mountPath: string) {}
  run = (req: Request, name: string) => absoluteUrl(req, this.mountPath + pathOf(QUEUE_ROUTES.run, { task: name }));
  task = (req: Request, taskId: string) => absoluteUrl(req, this.mountPath + pathOf(QUEUE_ROUTES.task, { id: taskId }));
  revoke = (req: Request, taskId: string) => absoluteUrl(req, this.mountPath + pathOf(QUEUE_ROUTES.revoke, { id: taskId }));
}

/** What a run looks like to its reader: the log plus the current state and outcome. */
function describeRun(req: Request, urls: QueueUrls, entry: TaskLogEntry, result: TaskResult): Record<string, unknown> {
  const failed = result.status === 'FAILURE' || result.status === 'REVOKED';
  return {
    // A state of the task's own (PROGRESS, ...) is shown as the task set it, as Celery's AsyncResult does.
    ...taskRow(entry, result.customState ?? result.status, true),
    date_done: result.dateDone,
    worker: result.worker,
    result: failed ? null : result.result,
    error: failed && result.exception ? { type: result.exception.exc_type, message: result.exception.exc_message } : null,
    traceback: result.traceback,
    url: urls.task(req, entry.task_id),
    revoke_url: urls.revoke(req, entry.task_id),
  };
}

/** The short answer of a submission with ?wait=: the outcome, never an HTTP error for a failed task. */
function outcome(result: TaskResult): Record<string, unknown> {
  const body: Record<string, unknown> = { task_id: result.taskId, status: result.customState ?? result.status, result: result.result };
  if (result.exception) {
    body.result = null;
    body.error = { type: result.exception.exc_type, message: result.exception.exc_message };
    body.traceback = result.traceback;
  }
  return body;
}

/** What the queue's routes need of the running service (the composition root hands over its context). */
export interface QueueRouterContext {
  settings: Pick<Settings, 'defaultPageSize' | 'taskWaitMaxSeconds'>;
  /** Absent when no broker is configured (the routes then answer 503). */
  queue: QueueService | undefined;
  /** Told of each submitted task; absent with METRICS_ENABLED=false. */
  metrics?: { taskSubmitted(name: string): void };
  /** Absent when no broker is configured (the routes then answer 503). */
  schedules?: ScheduleService;
}

/** `mountPath` is where the app mounts the router (its route table), for the links the answers carry. */
/**
 * The refusal a submission gets from its URL alone, before its body is read: running the task
 * named in `/run/<task>/` needs the right to run it (`segments` are below the queue's mount).
 */
export function submissionRefusal(p: Principal, method: string, segments: readonly string[]): ApiError | undefined {
  if (method !== 'POST' || segments.length !== 2 || segments[0] !== 'run') return undefined;
  const name = segments[1]!;
  return canRunTask(p, name) ? undefined : forbidden(`You may not run the task "${name}".`);
}

export function queueRouter(ctx: QueueRouterContext, mountPath: string): Router {
  const router = Router({ strict: true });
  const { settings } = ctx;
  const urls = new QueueUrls(mountPath);
  const runUrl = urls.run;

  const service = (): QueueService => {
    if (ctx.queue === undefined) throw unavailable('No task broker is configured (BROKER_URL).', 'broker_not_configured');
    return ctx.queue;
  };

  /** The task as live workers offer it; with `queue`, a list in which some worker consumes it from there is looked for. */
  async function liveTask(name: string, queue?: string): Promise<CatalogTask> {
    validateTaskName(name);
    const snapshot = await service().catalog.getSatisfying((known) => {
      const offered = known.tasks.get(name);
      return offered !== undefined && (queue === undefined || offered.queues.includes(queue));
    });
    const task = snapshot.tasks.get(name);
    if (task === undefined) throw notFound(`No live worker offers the task "${name}".`, 'no_such_task');
    return task;
  }

  /** The run, if the caller may see it; 404 otherwise so existence is not revealed. */
  async function readableRun(req: Request): Promise<TaskLogEntry> {
    const user = requireUser(req.principal);
    const id = req.params.id as string;
    if (!TASK_ID.test(id)) throw notFound('No such task.', 'no_such_task');
    const entry = await service().log.get(id);
    if (entry === null || (entry.user_id !== user.id && !isTaskAdmin(req.principal))) throw notFound('No such task.', 'no_such_task');
    return entry;
  }

  serve(router, QUEUE_ROUTES.tasks, {
    GET: async (req, res) => {
      requireUser(req.principal);
      const params = queryOf(req);
      const refresh = params.refresh === 'true' || params.refresh === '1';
      if (refresh && !isTaskAdmin(req.principal)) throw forbidden('Only task admins may refresh the task list.');
      const snapshot = await service().catalog.get(refresh);
      const tasks = [...snapshot.tasks.values()].sort((a, b) => a.name.localeCompare(b.name));
      const paging = parsePaging(params, settings.defaultPageSize);
      await paginate(req, res, tasks, paging, {
        map: (t) => ({
          name: t.name,
          docstring: t.docstring,
          signature: signatureJson(t.signature),
          queues: t.queues,
          url: runUrl(req, t.name),
        }),
        trailing: {
          queues: snapshot.queues,
          workers: snapshot.workers,
          ...(snapshot.workers.length === 0
            ? { message: 'No worker is running right now, so no task can be submitted. Start a worker and reload.' }
            : {}),
        },
      });
    },
  });

  serve(router, QUEUE_ROUTES.run, {
    GET: async (req, res) => {
      requireUser(req.principal);
      const task = await liveTask(req.params.task as string);
      const token = exampleTokenKey(req);
      const url = runUrl(req, task.name);
      const body = JSON.stringify({ function: task.name, queue: defaultQueue(task), args: [], kwargs: {}, tags: [] });
      setPageForm(res, { kind: 'task-run', postUrl: url, task: task.name, doc: task.docstring, signature: task.signature });
      respond(req, res, 200, {
        name: task.name,
        docstring: task.docstring,
        signature: signatureJson(task.signature),
        queues: task.queues,
        default_queue: defaultQueue(task),
        can_run: canRunTask(req.principal, task.name),
        url,
        example: `curl -X POST -H "Authorization: Token ${token}" -H "Content-Type: application/json" -H "Accept: application/json" -d '${body}' ${url}`,
      });
    },
    POST: async (req, res) => {
      const user = requireUser(req.principal);
      const params = queryOf(req);
      const name = validateTaskName(req.params.task as string);
      if (!canRunTask(req.principal, name)) throw forbidden(`You may not run the task "${name}".`);
      const wait = parseWait(params.wait, settings.taskWaitMaxSeconds);
      const submission = parseSubmission(req.body, name);
      const task = await liveTask(name, submission.queue);
      const queue = submission.queue ?? defaultQueue(task);
      if (queue === null || !task.queues.includes(queue)) {
        throw badRequest(
          'invalid_queue',
          `No live worker consumes "${name}" from queue "${queue ?? ''}". Queues for this task: ${task.queues.join(', ') || 'none'}.`,
        );
      }
      const queueService = service();
      const submitter = submitterAccessOf({
        username: user.name,
        isSuperuser: req.principal.isSuperuser,
        permissions: req.principal.permissions,
      });
      const { taskId } = await queueService.submit(submitter, user.id, name, submission, queue);
      ctx.metrics?.taskSubmitted(name);
      const resultUrl = urls.task(req, taskId);
      res.setHeader('Location', resultUrl);
      if (wait !== undefined && wait > 0) {
        const result = await queueService.waitForResult(taskId, wait);
        if (READY_STATES.has(result.status)) {
          respond(req, res, 200, { ...outcome(result), result_url: resultUrl });
          return;
        }
      }
      respond(req, res, 202, { task_id: taskId, status: 'PENDING', result_url: resultUrl });
    },
  });

  serve(router, QUEUE_ROUTES.task, {
    GET: async (req, res) => {
      const params = queryOf(req);
      const wait = parseWait(params.wait, settings.taskWaitMaxSeconds);
      const entry = await readableRun(req);
      // ?wait=<s>: the answer is held until the run finished or the time is up (a long poll,
      // which answers sooner than a client polling at its own interval, with fewer requests).
      const result =
        wait !== undefined && wait > 0 ? await service().waitForResult(entry.task_id, wait) : await service().results.get(entry.task_id);
      respond(req, res, 200, describeRun(req, urls, entry, result));
    },
  });

  serve(router, QUEUE_ROUTES.revoke, {
    POST: async (req, res) => {
      const entry = await readableRun(req);
      const body = (req.body ?? {}) as { terminate?: unknown };
      if (body.terminate !== undefined && typeof body.terminate !== 'boolean')
        throw badRequest('invalid_terminate', '"terminate" must be true or false.');
      const result = await service().revoke(entry, body.terminate === true);
      respond(req, res, 200, describeRun(req, urls, entry, result));
    },
  });

  serve(router, QUEUE_ROUTES.history, {
    GET: async (req, res) => {
      const user = requireUser(req.principal);
      const params = queryOf(req);
      const taskNames = params.taskname
        ?.split(',')
        .map((s) => s.trim())
        .filter((s) => s.length > 0);
      let status: TaskState | undefined;
      if (params.status !== undefined && params.status !== '') {
        const upper = params.status.toUpperCase();
        if (!isTaskState(upper)) throw badRequest('invalid_status', `Unknown task state "${params.status}".`);
        status = upper;
      }
      const paging = parsePaging(params, settings.defaultPageSize);
      const filter = { userId: user.id, taskNames, tag: params.tag === '' ? undefined : params.tag };
      await paginate(req, res, service().history(filter, status), paging, {
        map: ({ entry, status: state }) => ({ ...taskRow(entry, state, false), url: urls.task(req, entry.task_id) }),
      });
    },
  });

  mountDeadLetterRoutes(router, service);
  mountScheduleRoutes(
    router,
    () => {
      if (ctx.schedules === undefined) throw unavailable('No task broker is configured (BROKER_URL).', 'broker_not_configured');
      return ctx.schedules;
    },
    mountPath,
    settings.defaultPageSize,
  );

  return router;
}
