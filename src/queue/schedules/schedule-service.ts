/**
 * Schedules as the API manages them: create, change, pause, resume, delete, preview, "run now"
 * and their run log. Who may do what is the routes' business; this is what it does.
 */
import { randomUUID } from 'node:crypto';
import { badRequest, conflict } from '../../errors.js';
import { escapeRegExp } from '../../lib/regexp.js';
import { bindProblem } from './signature-check.js';
import { cursorOver, type CountedRows } from '../../lib/paging.js';
import { parseExactJson, type ExactJsonObject, type ExactJsonValue } from '../protocol/exact-numbers.js';
import type { QueueService, RevokedTask } from '../api/queue-service.js';
import type { JsonObject, JsonValue } from '../protocol/json.js';
import { bodyOf, mergeUpdate, parseScheduleBody, type ScheduleSpec } from './model.js';
import { nextFire, nextFires } from './timing.js';
import { isDuplicateKey, type RunDoc, type ScheduleDoc, type ScheduleStore } from './schedule-store.js';
import { PUBLISH_BOUND_MS, windowOf, type Scheduler } from './scheduler.js';

export type { ScheduleDoc };

export interface ScheduleServiceOptions {
  store: ScheduleStore;
  scheduler: Scheduler;
  queue: QueueService;
  minIntervalSeconds: number;
}

/** A schedule as the Operations page lists it. */
export interface ScheduleSummary {
  id: string;
  name: string;
  owner: string;
  task: string;
  nextFireAt: string | null;
  lastOutcome: string | null;
  lastReason: string | null;
  failureStreak: number;
  missedRuns: number;
}

export interface ScheduleOverview {
  active: number;
  paused: number;
  next: ScheduleSummary[];
  failing: ScheduleSummary[];
}

const dueOf = (next: Date | null, paused: boolean): Date | null => (paused ? null : next);

/** The fields a browse may sort by (the administration site's list). */
export const SCHEDULE_BROWSE_SORTS = ['name', 'owner', 'task', 'next_fire_at', 'paused', 'last_outcome', 'failure_streak'] as const;

/** What a browse may filter on: each text matches case-insensitively anywhere in its field. */
export interface ScheduleBrowseFilter {
  name?: string;
  owner?: string;
  task?: string;
  last_outcome?: string;
  paused?: boolean;
}

export interface ScheduleBrowseQuery {
  /** Only this owner's (undefined: everyone's). */
  ownerId: string | undefined;
  filter: ScheduleBrowseFilter;
  sortBy: (typeof SCHEDULE_BROWSE_SORTS)[number];
  direction: 'asc' | 'desc';
  skip: number;
  limit: number;
}

function browseFilter(ownerId: string | undefined, f: ScheduleBrowseFilter): Record<string, unknown> {
  const filter: Record<string, unknown> = ownerId === undefined ? {} : { owner_id: ownerId };
  for (const field of ['name', 'owner', 'task', 'last_outcome'] as const) {
    const text = f[field];
    if (text !== undefined && text !== '') filter[field] = { $regex: escapeRegExp(text), $options: 'i' };
  }
  if (f.paused !== undefined) filter.paused = f.paused;
  return filter;
}

/** The spec a stored schedule was made from. */
export function specOf(doc: ScheduleDoc): ScheduleSpec {
  return {
    name: doc.name,
    task: doc.task,
    argsJson: doc.args_json,
    kwargsJson: doc.kwargs_json,
    queue: doc.queue,
    timing: doc.timing,
    intervalAs: doc.interval_as,
    overlap: doc.overlap,
    catchUpWindowSeconds: doc.catch_up_window_s,
    jitterSeconds: doc.jitter_s,
    startTime: doc.start_time,
    endTime: doc.end_time,
    maxRuns: doc.max_runs,
    expiresSeconds: doc.expires_s,
    paused: doc.paused,
    note: doc.note,
  };
}

/** The schedule in the API's fields, as it was written (plus what the service keeps of it). */
export function bodyOfDoc(doc: ScheduleDoc): Record<string, unknown> {
  return bodyOf(specOf(doc), parseExactJson(doc.args_json) as ExactJsonValue[], parseExactJson(doc.kwargs_json) as ExactJsonObject);
}

function specFields(spec: ScheduleSpec) {
  return {
    name: spec.name,
    task: spec.task,
    args_json: spec.argsJson,
    kwargs_json: spec.kwargsJson,
    queue: spec.queue,
    timing: spec.timing,
    interval_as: spec.intervalAs,
    overlap: spec.overlap,
    catch_up_window_s: spec.catchUpWindowSeconds,
    jitter_s: spec.jitterSeconds,
    start_time: spec.startTime,
    end_time: spec.endTime,
    max_runs: spec.maxRuns,
    expires_s: spec.expiresSeconds,
    paused: spec.paused,
    note: spec.note,
  };
}

/** A new schedule's document: its spec, never fired, first due at `next` (null: never). */
export function newScheduleDoc(owner: { id: string; name: string }, spec: ScheduleSpec, now: Date, next: Date | null): ScheduleDoc {
  return {
    _id: randomUUID(),
    owner_id: owner.id,
    owner: owner.name,
    ...specFields(spec),
    created_at: now,
    updated_at: now,
    next_fire_at: next,
    due_at: dueOf(next, spec.paused),
    last_fire_at: null,
    total_runs: 0,
    missed_total: 0,
    last_task_id: null,
    last_outcome: null,
    last_reason: null,
    failure_streak: 0,
    buffered_run: null,
    finished: next === null,
  };
}

const nameTaken = (name: string) => conflict(`You already have a schedule named "${name}".`, 'schedule_exists', { field: 'name' });

export class ScheduleService {
  constructor(private readonly options: ScheduleServiceOptions) {}

  private context(now: Date, anchor: Date) {
    return { now, minIntervalSeconds: this.options.minIntervalSeconds, defaultAnchor: anchor };
  }

  /** Checks a body without saving it (the routes use it before asking about the task). */
  check(body: unknown, now = new Date()): ScheduleSpec {
    return parseScheduleBody(body, this.context(now, now));
  }

  async create(owner: { id: string; name: string }, spec: ScheduleSpec): Promise<ScheduleDoc> {
    const now = new Date();
    const doc = newScheduleDoc(owner, spec, now, nextFire(spec.timing, now, { start: spec.startTime, end: spec.endTime }));
    if (!(await this.options.store.insert(doc))) throw nameTaken(spec.name);
    this.options.scheduler.wake(doc.due_at);
    return doc;
  }

  /** The spec an update would make of `doc` (checked, not saved). */
  merged(doc: ScheduleDoc, update: unknown): ScheduleSpec {
    return parseScheduleBody(mergeUpdate(bodyOfDoc(doc), update), this.context(new Date(), doc.created_at));
  }

  /** Saves a changed spec: the next fire is computed anew from now, on the new timing. */
  async update(doc: ScheduleDoc, spec: ScheduleSpec): Promise<ScheduleDoc> {
    const now = new Date();
    const from = doc.last_fire_at !== null && doc.last_fire_at.getTime() > now.getTime() ? doc.last_fire_at : now;
    const next = nextFire(spec.timing, from, { start: spec.startTime, end: spec.endTime });
    const finished = next === null || (spec.maxRuns !== null && doc.total_runs >= spec.maxRuns);
    const fields = {
      ...specFields(spec),
      updated_at: now,
      next_fire_at: finished ? null : next,
      due_at: finished ? null : dueOf(next, spec.paused),
      finished,
    };
    try {
      await this.options.store.updateIf(doc._id, {}, { $set: fields });
    } catch (error) {
      if (isDuplicateKey(error)) throw nameTaken(spec.name);
      throw error;
    }
    await this.withdrawNotDue(doc, await this.options.store.notDueYet(doc._id, now));
    this.options.scheduler.wake(fields.due_at);
    return { ...doc, ...fields };
  }

  /** Pausing keeps the schedule and its next fire; the scheduler passes it by until it is resumed. */
  async pause(doc: ScheduleDoc, note: string | undefined): Promise<ScheduleDoc> {
    const fields = { paused: true, due_at: null, updated_at: new Date(), ...(note === undefined ? {} : { note }) };
    await this.options.store.updateIf(doc._id, {}, { $set: fields });
    await this.withdrawNotDue(doc, await this.options.store.notDueYet(doc._id, fields.updated_at));
    return { ...doc, ...fields };
  }

  /** Fires that passed while paused are not caught up: the next fire is the first from now. */
  async resume(doc: ScheduleDoc): Promise<ScheduleDoc> {
    const now = new Date();
    const next = doc.finished ? null : nextFire(doc.timing, now, windowOf(doc));
    const fields = { paused: false, note: '', next_fire_at: next, due_at: next, finished: next === null, updated_at: now };
    await this.options.store.updateIf(doc._id, {}, { $set: fields });
    this.options.scheduler.wake(next);
    return { ...doc, ...fields };
  }

  get(id: string): Promise<ScheduleDoc | null> {
    return this.options.store.get(id);
  }

  async delete(doc: ScheduleDoc): Promise<boolean> {
    // Read before the run log goes with the schedule.
    const notDue = await this.options.store.notDueYet(doc._id, new Date());
    const deleted = await this.options.store.delete(doc._id);
    await this.withdrawNotDue(doc, notDue);
    return deleted;
  }

  /**
   * Withdraws fires of a schedule just changed, paused or deleted that are not due yet: their
   * run-log entries are removed (the scheduler fires the schedule as it is now: a changed one at
   * its next time, which may be the same), and a history entry written ahead and not yet
   * published goes with them. Those of a burst may be on their way to the broker already,
   * published ahead of their time with an `eta` (see the scheduler's MAX_LEAD_MS): each fire that
   * may be is revoked — REVOKED recorded in the results, which every worker of this service reads
   * before it starts a task, and the revoke broadcast, so workers holding it drop it. A fire may
   * be out when it was published, a mark says it is being published, or it is due within
   * PUBLISH_BOUND_MS of the clock read once its claim is removed; a fire due later was never
   * handed to the broker and, its claim gone, never will be, so it is not revoked (a revoke
   * would record a result for a task that never existed).
   */
  private async withdrawNotDue(doc: ScheduleDoc, runs: readonly RunDoc[]): Promise<void> {
    const { queue, store } = this.options;
    if (runs.length === 0) return;
    const ids = runs.map((r) => r._id);
    await store.removeRuns(ids);
    // The clock is read after the removal is committed (see PUBLISH_BOUND_MS).
    const bound = Date.now() + PUBLISH_BOUND_MS;
    const marked = await store.markedAmong(ids);
    const mayBeOut = runs.filter(
      (r) => r.state !== 'claimed' || marked.has(r._id) || r.due_at === undefined || r.due_at.getTime() <= bound,
    );
    await Promise.all(
      mayBeOut
        .map((r) => r.task_id)
        .filter((id) => id !== null)
        .map(async (taskId) => {
          const entry = await queue.log.getWritten(taskId);
          await queue.revoke(entry ?? this.entryOf(doc, taskId), false);
        }),
    );
    await queue.log.dropUnpublished(runs.map((r) => r.task_id).filter((id) => id !== null));
  }

  /** What a revoke records of a fire whose history entry is not written (yet). */
  private entryOf(doc: ScheduleDoc, taskId: string): RevokedTask {
    return {
      task_id: taskId,
      task_name: doc.task,
      args: JSON.parse(doc.args_json) as JsonValue[],
      kwargs: JSON.parse(doc.kwargs_json) as JsonObject,
      queue: doc.queue ?? '',
    };
  }

  runNow(doc: ScheduleDoc): Promise<RunDoc> {
    return this.options.scheduler.runNow(doc);
  }

  /** The next `count` fire times from now (none while finished). */
  preview(doc: ScheduleDoc, count: number): Date[] {
    if (doc.finished) return [];
    const left = doc.max_runs === null ? count : Math.max(0, Math.min(count, doc.max_runs - doc.total_runs));
    return nextFires(doc.timing, new Date(), left, windowOf(doc));
  }

  /** The schedules of one owner, or everyone's (`ownerId` undefined), by name. */
  list(ownerId: string | undefined): CountedRows<ScheduleDoc> {
    const filter = ownerId === undefined ? {} : { owner_id: ownerId };
    const { schedules } = this.options.store;
    return {
      count: schedules.countDocuments(filter),
      open: (window) => cursorOver(schedules.find(filter).sort({ name: 1, _id: 1 }).skip(window.skip).limit(window.limit).toArray()),
    };
  }

  /** A page of schedules as the administration site lists them. */
  browse(query: ScheduleBrowseQuery): Promise<ScheduleDoc[]> {
    return this.options.store.schedules
      .find(browseFilter(query.ownerId, query.filter))
      .sort({ [query.sortBy]: query.direction === 'asc' ? 1 : -1, _id: 1 })
      .skip(query.skip)
      .limit(query.limit)
      .toArray();
  }

  countBrowse(ownerId: string | undefined, filter: ScheduleBrowseFilter): Promise<number> {
    return this.options.store.schedules.countDocuments(browseFilter(ownerId, filter));
  }

  getMany(ids: readonly string[]): Promise<ScheduleDoc[]> {
    return this.options.store.getMany(ids);
  }

  runs(scheduleId: string): CountedRows<RunDoc> {
    const { store } = this.options;
    return {
      count: store.countRuns(scheduleId),
      open: (window) => cursorOver(store.recentRuns(scheduleId, window.skip, window.limit)),
    };
  }

  /**
   * What the Operations page shows of the schedules of one owner (or everyone's): how many are
   * active and paused, the next to fire, and those whose last fires were refused or failed.
   */
  async overview(ownerId: string | undefined, shown: number): Promise<ScheduleOverview> {
    const { schedules } = this.options.store;
    const mine = ownerId === undefined ? {} : { owner_id: ownerId };
    const row = (d: ScheduleDoc): ScheduleSummary => ({
      id: d._id,
      name: d.name,
      owner: d.owner,
      task: d.task,
      nextFireAt: d.paused ? null : (d.next_fire_at?.toISOString() ?? null),
      lastOutcome: d.last_outcome,
      lastReason: d.last_reason,
      failureStreak: d.failure_streak,
      missedRuns: d.missed_total,
    });
    const [active, paused, next, failing] = await Promise.all([
      schedules.countDocuments({ ...mine, paused: false, finished: false }),
      schedules.countDocuments({ ...mine, paused: true }),
      schedules
        .find({ ...mine, due_at: { $ne: null } })
        .sort({ due_at: 1 })
        .limit(shown)
        .toArray(),
      schedules
        .find({ ...mine, failure_streak: { $gt: 0 } })
        .sort({ failure_streak: -1 })
        .limit(shown)
        .toArray(),
    ]);
    return { active, paused, next: next.map(row), failing: failing.map(row) };
  }

  /**
   * Refuses (400) arguments that cannot bind to the task's signature, where a live worker sent
   * one; without one (a stock Celery worker, no worker now) nothing is refused.
   */
  async checkArguments(spec: ScheduleSpec): Promise<void> {
    let signature;
    try {
      signature = (await this.options.queue.catalog.get()).tasks.get(spec.task)?.signature ?? null;
    } catch {
      return;
    }
    if (signature === null) return;
    const args = parseExactJson(spec.argsJson) as unknown[];
    const kwargs = Object.keys(parseExactJson(spec.kwargsJson) as object);
    const problem = bindProblem(signature, args.length, kwargs);
    if (problem !== null) {
      throw badRequest('invalid_arguments', `The arguments do not fit ${spec.task}${signature.text}: ${problem}.`, {
        signature: signature.text,
      });
    }
  }

  /** Whether a live worker offered `task` when this process last asked, without asking (null: never asked yet). */
  offeredLately(task: string): boolean | null {
    const known = this.options.queue.catalog.peek();
    return known === null ? null : known.tasks.has(task);
  }

  /** Whether a live worker offers `task`, as this process last heard (a warning, never a refusal). */
  async offered(task: string): Promise<boolean | null> {
    try {
      return (await this.options.queue.catalog.get()).tasks.has(task);
    } catch {
      return null;
    }
  }
}
