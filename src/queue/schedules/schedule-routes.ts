/**
 * The schedules' endpoints (QUEUE_ROUTES.schedules… in the queue's route table). A schedule is
 * seen and managed by its owner and by task admins; anyone else gets 404, so its existence is not
 * revealed. Making one needs `cybercom_queue.schedule_tasks` (task admins have it) and the right to
 * run its task; both are checked again at every fire, as the owner (see scheduler.ts).
 */
import type { Request, Router } from 'express';
import { canRunTask, canSchedule, isTaskAdmin } from '../../auth/permissions.js';
import { isAuthenticated, type Principal } from '../../auth/principal.js';
import { badRequest, forbidden, notFound, unauthenticated, unavailable } from '../../errors.js';
import { absoluteUrl } from '../../http/base-url.js';
import { paginate } from '../../http/paginate.js';
import { parsePaging } from '../../http/paging.js';
import { queryOf } from '../../http/params.js';
import { respond } from '../../http/respond.js';
import { setPageForm } from '../../render/html-forms.js';
import { pathOf, serve } from '../../http/route-table.js';
import { PREVIEW_COUNT, QUEUE_ROUTES } from '../api/route-table.js';
import type { RunDoc, ScheduleDoc } from './schedule-store.js';
import { bodyOfDoc, type ScheduleService } from './schedule-service.js';

const R = QUEUE_ROUTES;
const ID = /^[0-9a-f-]{36}$/;

function requireUser(p: Principal): { id: string; name: string } {
  if (!isAuthenticated(p) || p.username === null || p.userId === null) throw unauthenticated();
  return { id: p.userId, name: p.username };
}

const iso = (d: Date | null): string | null => d?.toISOString() ?? null;

class ScheduleUrls {
  constructor(private readonly mountPath: string) {}
  list = (req: Request) => absoluteUrl(req, this.mountPath + pathOf(R.schedules, {}));
  schedule = (req: Request, id: string) => absoluteUrl(req, this.mountPath + pathOf(R.schedule, { id }));
  runs = (req: Request, id: string) => absoluteUrl(req, this.mountPath + pathOf(R.scheduleRuns, { id }));
  next = (req: Request, id: string) => absoluteUrl(req, this.mountPath + pathOf(R.scheduleNext, { id }));
  task = (req: Request, id: string) => absoluteUrl(req, this.mountPath + pathOf(R.task, { id }));
}

/** A schedule as every answer shows it: what its owner wrote, then what the service keeps of it. */
function describe(req: Request, urls: ScheduleUrls, doc: ScheduleDoc, warnings: string[] = []): Record<string, unknown> {
  return {
    id: doc._id,
    owner: doc.owner,
    ...bodyOfDoc(doc),
    next_fire_at: doc.paused ? null : iso(doc.next_fire_at),
    last_fire_at: iso(doc.last_fire_at),
    total_runs: doc.total_runs,
    missed_runs: doc.missed_total,
    last_outcome: doc.last_outcome,
    last_reason: doc.last_reason,
    last_task_id: doc.last_task_id,
    failure_streak: doc.failure_streak,
    finished: doc.finished,
    created_at: iso(doc.created_at),
    updated_at: iso(doc.updated_at),
    url: urls.schedule(req, doc._id),
    runs_url: urls.runs(req, doc._id),
    next_url: urls.next(req, doc._id),
    ...(warnings.length > 0 ? { warnings } : {}),
  };
}

function describeRun(req: Request, urls: ScheduleUrls, run: RunDoc): Record<string, unknown> {
  return {
    id: run._id,
    kind: run.kind,
    fire_at: iso(run.fire_at),
    state: run.state,
    task_id: run.state === 'published' ? run.task_id : null,
    task_url: run.state === 'published' && run.task_id !== null ? urls.task(req, run.task_id) : null,
    published_at: iso(run.published_at),
    lateness_ms: run.lateness_ms,
    count: run.count,
    reason: run.reason,
    recovered: run.recovered,
  };
}

export function mountScheduleRoutes(router: Router, service: () => ScheduleService, mountPath: string, defaultPageSize: number): void {
  const urls = new ScheduleUrls(mountPath);

  /** The schedule, if the caller may manage it; 404 otherwise. */
  async function ownSchedule(req: Request): Promise<ScheduleDoc> {
    const user = requireUser(req.principal);
    const id = req.params.id as string;
    if (!ID.test(id)) throw notFound('No such schedule.', 'no_such_schedule');
    const doc = await service().get(id);
    if (doc === null || (doc.owner_id !== user.id && !isTaskAdmin(req.principal))) throw notFound('No such schedule.', 'no_such_schedule');
    return doc;
  }

  function mayRun(p: Principal, task: string): void {
    if (!canRunTask(p, task)) throw forbidden(`You may not run the task "${task}".`);
  }

  const notOffered = (task: string) => `No live worker offers "${task}" right now; its fires will wait in the queue until one does.`;

  async function warningsFor(task: string): Promise<string[]> {
    return (await service().offered(task)) === false ? [notOffered(task)] : [];
  }

  serve(router, R.schedules, {
    GET: async (req, res) => {
      const user = requireUser(req.principal);
      const params = queryOf(req);
      const paging = parsePaging(params, defaultPageSize);
      if (canSchedule(req.principal)) setPageForm(res, { kind: 'schedule', postUrl: urls.list(req) });
      await paginate(req, res, service().list(isTaskAdmin(req.principal) ? undefined : user.id), paging, {
        // The task list this process last heard (no broadcast per page): a schedule whose task no live worker offers says so.
        map: (doc) => describe(req, urls, doc, service().offeredLately(doc.task) === false ? [notOffered(doc.task)] : []),
      });
    },
    POST: async (req, res) => {
      const user = requireUser(req.principal);
      if (!canSchedule(req.principal)) throw forbidden('You may not schedule tasks (this needs cybercom_queue.schedule_tasks).');
      const spec = service().check(req.body);
      mayRun(req.principal, spec.task);
      await service().checkArguments(spec);
      const doc = await service().create(user, spec);
      res.setHeader('Location', urls.schedule(req, doc._id));
      respond(req, res, 201, describe(req, urls, doc, await warningsFor(doc.task)));
    },
  });

  serve(router, R.schedule, {
    GET: async (req, res) => {
      const doc = await ownSchedule(req);
      respond(req, res, 200, describe(req, urls, doc, await warningsFor(doc.task)));
    },
    PATCH: async (req, res) => {
      const doc = await ownSchedule(req);
      const spec = service().merged(doc, req.body);
      if (spec.task !== doc.task) mayRun(req.principal, spec.task);
      await service().checkArguments(spec);
      const updated = await service().update(doc, spec);
      respond(req, res, 200, describe(req, urls, updated, await warningsFor(updated.task)));
    },
    DELETE: async (req, res) => {
      const doc = await ownSchedule(req);
      await service().delete(doc);
      res.status(204).end();
    },
  });

  serve(router, R.schedulePause, {
    POST: async (req, res) => {
      const doc = await ownSchedule(req);
      const body = (req.body ?? {}) as { note?: unknown };
      if (body.note !== undefined && (typeof body.note !== 'string' || body.note.length > 2_000)) {
        throw badRequest('invalid_note', '"note" must be a text of at most 2000 characters.');
      }
      respond(req, res, 200, describe(req, urls, await service().pause(doc, body.note as string | undefined)));
    },
  });

  serve(router, R.scheduleResume, {
    POST: async (req, res) => {
      const doc = await ownSchedule(req);
      respond(req, res, 200, describe(req, urls, await service().resume(doc)));
    },
  });

  serve(router, R.scheduleRun, {
    POST: async (req, res) => {
      const doc = await ownSchedule(req);
      const run = await service().runNow(doc);
      if (run.state === 'refused')
        throw forbidden(`The schedule's owner cannot run it now: ${run.reason ?? 'refused'}.`, 'schedule_refused');
      if (run.state !== 'published') throw unavailable(`The run could not be published: ${run.reason ?? run.state}.`, 'run_not_published');
      const resultUrl = urls.task(req, run.task_id!);
      res.setHeader('Location', resultUrl);
      respond(req, res, 202, { task_id: run.task_id, status: 'PENDING', result_url: resultUrl, run: describeRun(req, urls, run) });
    },
  });

  serve(router, R.scheduleNext, {
    GET: async (req, res) => {
      const params = queryOf(req);
      const doc = await ownSchedule(req);
      let count = PREVIEW_COUNT.default;
      if (params.count !== undefined && params.count !== '') {
        count = Number(params.count);
        if (!/^\d+$/.test(params.count) || count < 1 || count > PREVIEW_COUNT.max) {
          throw badRequest('invalid_count', `"count" must be a whole number from 1 to ${PREVIEW_COUNT.max}.`);
        }
      }
      respond(req, res, 200, {
        id: doc._id,
        name: doc.name,
        paused: doc.paused,
        next_fire_times: service()
          .preview(doc, count)
          .map((d) => d.toISOString()),
      });
    },
  });

  serve(router, R.scheduleRuns, {
    GET: async (req, res) => {
      const params = queryOf(req);
      const doc = await ownSchedule(req);
      await paginate(req, res, service().runs(doc._id), parsePaging(params, defaultPageSize), {
        map: (run) => describeRun(req, urls, run),
      });
    },
  });
}
