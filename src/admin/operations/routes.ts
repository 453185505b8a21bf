/**
 * The Operations page's data and actions, under the admin site (so behind its access gate:
 * staff and superusers with a browser session; and its CSRF check for the POST):
 *   GET  /api/admin/operations/data     workers, queues, running tasks, outcomes per minute,
 *                                       latest failures (those the reader may see)
 *   POST /api/admin/operations/revoke   {"task_id": "...", "terminate": false}
 *
 * The monitor that gathers the data starts on the first request, so API processes whose admin
 * nobody opens do not listen to worker events. Under the cluster (API_PROCESSES > 1) the process
 * that answers asks every API process for what its own monitor counted (starting it there if it
 * was not yet) and merges it in (process-merge.ts), so every poll shows the same numbers.
 */
import { Router, type Request } from 'express';
import { methods } from '../../http/methods.js';
import { jsonBody } from '../../http/body.js';
import { checkParams, objectBody } from '../../http/params.js';
import { badRequest, notFound, unavailable } from '../../errors.js';
import type { AdminContext } from '../context.js';
import { TASK_ID, type QueueService } from '../../queue/api/queue-service.js';
import { HEARTBEAT_INTERVAL_S } from '../../queue/protocol/events.js';
import { ensureFailureIndex, latestFailures } from './latest-failures.js';
import { OperationsMonitor } from './operations-monitor.js';
import type { RunningTask } from './views.js';
import { OPERATIONS_TOPIC, gatherProcessOperations, mergeProcesses } from './process-merge.js';
import { mayReadTask } from './task-visibility.js';
import { isTaskAdmin } from '../../auth/permissions.js';

/** Failures listed at most. */
const FAILURES_SHOWN = 20;
/** Schedules listed at most, in each of the next-to-fire and failing lists. */
const SCHEDULES_SHOWN = 10;
const MAX_BODY_BYTES = 4 * 1024;

export const OFFLINE_RULE =
  `A worker is offline when no heartbeat came for twice its heartbeat interval (${2 * HEARTBEAT_INTERVAL_S} s at the default ` +
  `${HEARTBEAT_INTERVAL_S} s), or at once when it says it stops; it is listed until 10 minutes after its last heartbeat.`;

async function visibleRunning(
  queue: QueueService,
  req: Request,
  running: RunningTask[],
): Promise<(RunningTask & { user: string | null })[]> {
  const entries = await queue.logEntries(running.map((t) => t.id));
  return running.filter((t) => mayReadTask(req.principal, entries.get(t.id))).map((t) => ({ ...t, user: entries.get(t.id)?.user ?? null }));
}

export function operationsRouter(ctx: AdminContext): Router {
  let monitor: OperationsMonitor | undefined;
  const service = (): { queue: QueueService; monitor: OperationsMonitor } => {
    if (ctx.queue === undefined) throw unavailable('No task broker is configured (BROKER_URL).', 'broker_not_configured');
    if (monitor === undefined) {
      monitor = new OperationsMonitor(ctx.queue, ctx.logger, ctx.settings.workersTrackedMax).start();
      ensureFailureIndex(ctx.queue).catch((err: unknown) => ctx.logger.warn({ err }, 'operations: could not create the failures index'));
    }
    return { queue: ctx.queue, monitor };
  };
  // Asked by the process that answers the page: starts this process's monitor, so from the first
  // look at the page on, the tasks submitted through any process are counted.
  ctx.cluster?.answer(OPERATIONS_TOPIC, () => Promise.resolve().then(() => service().monitor.processOperations()));

  const router = Router({ strict: true });
  router.all(
    '/data',
    methods({
      GET: async (req, res) => {
        checkParams(req, ['_']);
        const { queue, monitor: m } = service();
        const [own, failures, processes, schedules] = await Promise.all([
          m.view(),
          latestFailures(queue, req.principal, FAILURES_SHOWN),
          ctx.cluster === undefined ? undefined : gatherProcessOperations(ctx.cluster),
          // A task admin's are everyone's; anyone else's are their own, as the schedules' API shows them.
          ctx.schedules?.overview(isTaskAdmin(req.principal) ? undefined : (req.principal.userId ?? ''), SCHEDULES_SHOWN) ?? null,
        ]);
        const view = processes === undefined ? own : mergeProcesses(own, processes, ctx.settings.workersTrackedMax);
        res.setHeader('Cache-Control', 'no-store');
        res.json({
          generatedAt: new Date().toISOString(),
          offlineRule: OFFLINE_RULE,
          ...view,
          running: await visibleRunning(queue, req, view.running),
          failures,
          schedules,
        });
      },
    }),
  );
  router.all(
    '/revoke',
    ...jsonBody({ maxBytes: MAX_BODY_BYTES }),
    methods({
      POST: async (req, res) => {
        checkParams(req, []);
        const body = objectBody(req.body, ['task_id', 'terminate']);
        if (typeof body.task_id !== 'string') throw badRequest('invalid_task_id', '"task_id" must be a task id.');
        if (body.terminate !== undefined && typeof body.terminate !== 'boolean')
          throw badRequest('invalid_terminate', '"terminate" must be true or false.');
        const { queue } = service();
        const id = body.task_id;
        const terminate = body.terminate === true;
        const entry = TASK_ID.test(id) ? await queue.logEntry(id) : null;
        // Revoking follows reading: the submitter or a task admin, as for the API's revoke.
        if (!TASK_ID.test(id) || !mayReadTask(req.principal, entry)) throw notFound('No such task.', 'no_such_task');
        if (entry === null) {
          // A task sent by another client (only task admins get here): tell the workers only.
          await queue.broadcastRevoke(id, terminate);
          res.json({ task_id: id, terminate, status: null });
          return;
        }
        const result = await queue.revoke(entry, terminate);
        res.json({ task_id: id, terminate, status: result.customState ?? result.status });
      },
    }),
  );
  return router;
}
