/**
 * Exactly once on several API processes: real `serve` processes (two of their own, then one with
 * three API processes, one of them killed with SIGKILL mid-run) share one service database and
 * each runs its scheduler. A schedule firing every second inside a 20-second window must leave
 * exactly 20 runs: each fire published once, under its own task, in the history once. A schedule
 * made through a process whose scheduler is off is fired by another within its idle look. Then a
 * burst: 250 schedules due at the same second, twice, on two processes, large enough that both
 * claim it ahead of its time (the scheduler's claim-ahead path) and race for the same fires.
 * A burst's history entries are written ahead with its claims, seen by nobody until published:
 * schedules paused, changed or deleted after that leave no entry behind, and a process killed
 * after writing them, before their time, leaves its fires to another process, which publishes
 * each once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { taskCodename } from '../../../src/auth/permissions.js';
import type { RunDoc } from '../../../src/queue/schedules/schedule-store.js';
import type { TaskLogEntry } from '../../../src/queue/api/task-log.js';
import type { Worker } from '../../../src/worker/worker.js';
import { call, serviceDatabaseName, startTestApp, uniqueName, type TestApp } from '../../support/app.js';
import { spawnServe, type ServeProcess } from '../../support/serve-process.js';
import { until } from '../../support/until.js';
import { createClocked, publishedRun, startWorker } from './support.js';

const WINDOW_S = 20;
const SERVE_ENV = { SCHEDULE_MIN_INTERVAL_S: '1', SCHEDULE_CLAIM_LEASE_S: '3', METRICS_ENABLED: 'false', TASK_LIST_CACHE_S: '3600' };

let worker: Worker;
let queue: string;
/** Where the worker writes its results (its own database). */
let resultDatabase: string;
const serves: ServeProcess[] = [];
const apps: TestApp[] = [];

beforeAll(async () => {
  resultDatabase = uniqueName('sr_');
  const started = await startWorker(resultDatabase, uniqueName('mq-'), { concurrency: 4 });
  worker = started.worker;
  queue = started.queue;
});

afterAll(async () => {
  await Promise.all(serves.map((s) => s.kill()));
  for (const app of apps) await app.close().catch(() => undefined);
  await worker?.close(1_000).catch(() => undefined);
});

/** A service database with an owner allowed to schedule tasks.add, read and written through an in-process app whose scheduler is off. */
async function database(): Promise<{ name: string; app: TestApp; token: string }> {
  const name = serviceDatabaseName();
  const app = await startTestApp({ SERVICE_DATABASE: name, SCHEDULER_ENABLED: 'false', SCHEDULE_MIN_INTERVAL_S: '1' });
  apps.push(app);
  const owner = uniqueName('owner');
  await app.users.createUser({
    username: owner,
    password: `pw-${owner}-1`,
    permissions: ['cybercom_queue.schedule_tasks', taskCodename('tasks.add')],
  });
  return { name, app, token: await app.users.tokenFor(owner) };
}

/** The body of a schedule running tasks.add(1, 2) every `every` seconds from `start` until `end`. */
function intervalSchedule(prefix: string, every: number, start: Date, end: Date) {
  return {
    name: uniqueName(prefix),
    task: 'tasks.add',
    args: [1, 2],
    queue,
    interval: { every, anchor: start.toISOString() },
    start_time: start.toISOString(),
    end_time: end.toISOString(),
  };
}

/** Every second from `start` for WINDOW_S seconds: WINDOW_S fires. */
async function everySecond(app: TestApp, token: string, start: Date): Promise<string> {
  const end = new Date(start.getTime() + WINDOW_S * 1000);
  const res = await call(app.url, 'POST', '/api/queue/schedules/', { token, body: intervalSchedule('tick-', 1, start, end) });
  expect(res.status, res.text).toBe(201);
  return res.json.id as string;
}

/** Waits for the schedule to finish, then checks exactly WINDOW_S runs, each fire once; answers the runs. */
async function exactlyOnce(app: TestApp, token: string, id: string, start: Date): Promise<RunDoc[]> {
  const runs = app.ctx.serviceDb.collection<RunDoc>('schedule_runs');
  await until(
    async () => (await app.ctx.serviceDb.collection('schedules').findOne({ _id: id as never, finished: true })) !== null,
    (WINDOW_S + 30) * 1000,
    'the schedule to finish',
  );
  const all = await runs.find({ schedule_id: id }).toArray();
  expect(
    all.filter((r) => r.state !== 'published'),
    JSON.stringify(all.filter((r) => r.state !== 'published')),
  ).toEqual([]);
  const fires = all.map((r) => r.fire_at.getTime()).sort((a, b) => a - b);
  expect(fires).toEqual(Array.from({ length: WINDOW_S }, (_, i) => start.getTime() + i * 1000));
  expect(new Set(all.map((r) => r.task_id)).size).toBe(WINDOW_S);
  const history = await call(app.url, 'GET', `/api/queue/usertasks/?tag=schedule:${id}&page_size=0`, { token });
  expect(history.json.count).toBe(WINDOW_S);
  expect(new Set(history.json.results.map((r: { task_id: string }) => r.task_id))).toEqual(new Set(all.map((r) => r.task_id)));
  return all;
}

function p99(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)]!;
}

describe('a schedule every second on several API processes', () => {
  it('two serve processes: exactly one run per fire, none late by more than a second', async () => {
    const { name, app, token } = await database();
    const started = await Promise.all([
      spawnServe({ ...SERVE_ENV, SERVICE_DATABASE: name }),
      spawnServe({ ...SERVE_ENV, SERVICE_DATABASE: name }),
    ]);
    serves.push(...started);
    await Promise.all(started.map((s) => s.listening()));
    const start = new Date(Math.ceil(Date.now() / 1000) * 1000 + 2_000);
    const id = await everySecond(app, token, start);
    const runs = await exactlyOnce(app, token, id, start);
    const lateness = runs.map((r) => r.lateness_ms ?? Number.POSITIVE_INFINITY);
    expect(p99(lateness), JSON.stringify(lateness)).toBeLessThanOrEqual(1_000);
    await Promise.all(started.map((s) => s.kill()));
  });

  it('three API processes, one killed with SIGKILL mid-run: no fire lost or doubled', async () => {
    const { name, app, token } = await database();
    const serve = await spawnServe({ ...SERVE_ENV, SERVICE_DATABASE: name, API_PROCESSES: '3' });
    serves.push(serve);
    await serve.listening();
    await until(
      () =>
        new Set(
          serve
            .lines()
            .filter((l) => l.msg === 'API process ready')
            .map((l) => l.worker),
        ).size === 3,
      60_000,
      'three API processes',
    );
    const start = new Date(Math.ceil(Date.now() / 1000) * 1000 + 2_000);
    const id = await everySecond(app, token, start);
    // Mid-run: kill the process that made the latest claim, so the one killed is one that fires.
    await new Promise((r) => setTimeout(r, start.getTime() + (WINDOW_S / 2) * 1000 - Date.now()));
    const latest = await app.ctx.serviceDb
      .collection<RunDoc>('schedule_runs')
      .find({ schedule_id: id })
      .sort({ fire_at: -1 })
      .limit(1)
      .next();
    const pid = Number(latest!.claimed_by.split(':')[1]);
    const pids = serve
      .lines()
      .filter((l) => l.msg === 'API process ready')
      .map((l) => l.workerPid);
    expect(pids).toContain(pid);
    process.kill(pid, 'SIGKILL');
    const runs = await exactlyOnce(app, token, id, start);
    expect(runs.some((r) => r.claimed_by.split(':')[1] === String(pid))).toBe(true);
    expect(new Set(runs.map((r) => r.claimed_by)).size).toBeGreaterThanOrEqual(2);
    await serve.kill();
    // Up to 60 s for three processes to start, the 20 s window, up to 50 s for the schedule to finish.
  }, 180_000);
});

/** Schedules in the burst: above the 200 from which the scheduler claims a burst ahead of its time. */
const BURST = 250;
const BURST_EVERY_S = 10;

/** BURST schedules firing every BURST_EVERY_S from `start` until `end`, made through the API 8 at a time; their ids. */
async function makeBurst(app: TestApp, token: string, start: Date, end: Date): Promise<string[]> {
  const ids: string[] = [];
  let made = 0;
  const make = async (): Promise<void> => {
    while (made < BURST) {
      made++;
      const res = await call(app.url, 'POST', '/api/queue/schedules/', {
        token,
        body: intervalSchedule('burst-', BURST_EVERY_S, start, end),
      });
      expect(res.status, res.text).toBe(201);
      ids.push(res.json.id as string);
    }
  };
  await Promise.all(Array.from({ length: 8 }, make));
  return ids;
}

/** The history entries of the schedules' fires as stored, published or written ahead. */
function entriesOf(app: TestApp, ids: string[]): Promise<TaskLogEntry[]> {
  return app.ctx.serviceDb
    .collection<TaskLogEntry>('task_log')
    .find({ tags: { $in: ids.map((id) => `schedule:${id}`) } })
    .toArray();
}

describe('a schedule made through a process whose scheduler is off', () => {
  it('is fired by another process at most 1 s late (its idle look), plus the publishing', async () => {
    // `app` runs no scheduler: nothing wakes the serve process's scheduler for what is made through it.
    const { name, app, token } = await database();
    const serve = await spawnServe({ ...SERVE_ENV, SERVICE_DATABASE: name });
    serves.push(serve);
    await serve.listening();
    const runs = app.ctx.serviceDb.collection<RunDoc>('schedule_runs');
    // The first schedule made asks the workers for their tasks; the others are made from what they said.
    const later = new Date(Date.now() + 3_600_000).toISOString();
    const first = await call(app.url, 'POST', '/api/queue/schedules/', {
      token,
      body: { name: uniqueName('later-'), task: 'tasks.add', args: [1, 2], queue, clocked: later },
    });
    expect(first.status, first.text).toBe(201);
    const lateness: number[] = [];
    // Made at different moments of the other process's looks, each a little before its time.
    for (let i = 0; i < 4; i++) {
      await new Promise((r) => setTimeout(r, 700 + Math.floor(Math.random() * 600)));
      const at = new Date(Date.now() + 500);
      const id = await createClocked(app.url, token, { prefix: 'elsewhere-', args: [1, 2], queue, at });
      expect(Date.now(), 'made before its time').toBeLessThan(at.getTime());
      const run = await publishedRun(runs, id, 10_000);
      lateness.push(run.lateness_ms!);
    }
    expect(Math.max(...lateness), JSON.stringify(lateness)).toBeLessThanOrEqual(1_200);
    await serve.kill();
  });
});

describe('a burst of schedules due at the same second on two API processes', () => {
  it('claims it ahead and publishes each fire exactly once, none missed', async () => {
    const { name, app, token } = await database();
    const started = Promise.all([
      spawnServe({ ...SERVE_ENV, SERVICE_DATABASE: name }),
      spawnServe({ ...SERVE_ENV, SERVICE_DATABASE: name }),
    ]);
    // Two fires each, at `start` and BURST_EVERY_S later: the second burst is claimed ahead by
    // processes that are surely running, whatever the start-up took on a loaded machine.
    const start = new Date(Math.ceil(Date.now() / 1000) * 1000 + 45_000);
    const end = new Date(start.getTime() + 2 * BURST_EVERY_S * 1000);
    const ids = await makeBurst(app, token, start, end);
    const procs = await started;
    serves.push(...procs);
    await Promise.all(procs.map((s) => s.listening()));
    expect(Date.now(), 'schedules made and processes running before the burst').toBeLessThan(start.getTime());

    const schedules = app.ctx.serviceDb.collection('schedules');
    await until(
      async () => (await schedules.countDocuments({ _id: { $in: ids as never[] }, finished: true })) === BURST,
      (2 * BURST_EVERY_S + 60) * 1000,
      'every schedule of the burst to finish',
    );
    const runs = await app.ctx.serviceDb
      .collection<RunDoc>('schedule_runs')
      .find({ schedule_id: { $in: ids } })
      .toArray();
    const notPublished = runs.filter((r) => r.state !== 'published' || r.kind !== 'scheduled');
    expect(notPublished, JSON.stringify(notPublished.slice(0, 3))).toEqual([]);
    // Each schedule's two fires, once each.
    const fires = [start.getTime(), start.getTime() + BURST_EVERY_S * 1000];
    expect(runs).toHaveLength(BURST * 2);
    expect(new Set(runs.map((r) => `${r.schedule_id} ${r.fire_at.getTime()}`)).size).toBe(BURST * 2);
    expect(new Set(runs.map((r) => r.fire_at.getTime()))).toEqual(new Set(fires));
    // Claimed ahead: the second burst's claims were all made before its fires were due.
    const second = runs.filter((r) => r.fire_at.getTime() === fires[1]);
    expect(second.filter((r) => r.claimed_at.getTime() >= fires[1]!)).toEqual([]);
    // Published once each: one history entry per run, under the run's task id.
    const taskIds = new Set(runs.map((r) => r.task_id));
    expect(taskIds.size).toBe(BURST * 2);
    const history = await app.ctx.serviceDb
      .collection('task_log')
      .find({ tags: { $in: ids.map((id) => `schedule:${id}`) } }, { projection: { _id: 1 } })
      .toArray();
    expect(history).toHaveLength(BURST * 2);
    expect(new Set(history.map((h) => String(h._id)))).toEqual(taskIds);
    // Published ahead of their time (with their due time as eta), none ran before it.
    const results = app.ctx.serviceDb.client.db(resultDatabase).collection<{ _id: string; status: string; date_done: string }>('tombstone');
    await until(
      async () => (await results.countDocuments({ _id: { $in: [...taskIds] as string[] }, status: 'SUCCESS' })) === BURST * 2,
      60_000,
      'every fire run by the worker',
    );
    const fireOf = new Map(runs.map((r) => [r.task_id!, r.fire_at.getTime()]));
    const done = await results.find({ _id: { $in: [...taskIds] as string[] } }).toArray();
    const early = done.filter((d) => Date.parse(`${d.date_done}Z`) < fireOf.get(d._id)!);
    expect(early, JSON.stringify(early.slice(0, 3))).toEqual([]);
    await Promise.all(procs.map((s) => s.kill()));
  }, 240_000);
});

describe('a burst whose history entries are written ahead with its claims', () => {
  /** One fire at `start` for each of BURST schedules, made while one serve process starts; waits until it wrote their entries ahead. */
  async function writtenAhead(): Promise<{ app: TestApp; token: string; ids: string[]; start: Date; serve: ServeProcess }> {
    const { name, app, token } = await database();
    const starting = spawnServe({ ...SERVE_ENV, SERVICE_DATABASE: name });
    const start = new Date(Math.ceil(Date.now() / 1000) * 1000 + 45_000);
    const ids = await makeBurst(app, token, start, new Date(start.getTime() + BURST_EVERY_S * 500));
    const serve = await starting;
    serves.push(serve);
    await serve.listening();
    await until(
      async () => (await entriesOf(app, ids)).filter((e) => e.unpublished_for !== undefined).length === BURST,
      40_000,
      "the burst's history entries written ahead",
    );
    expect(Date.now(), 'entries written ahead of the fire').toBeLessThan(start.getTime() - 3_000);
    return { app, token, ids, start, serve };
  }

  it('lists, counts and reads none of them before they are published; withdrawn fires leave none behind', async () => {
    const { app, token, ids, start, serve } = await writtenAhead();
    const runs = app.ctx.serviceDb.collection<RunDoc>('schedule_runs');
    const hidden = (await runs.findOne({ schedule_id: ids[0]! }))!.task_id!;
    const [paused, changed, deleted] = [ids.slice(0, 3), ids.slice(3, 6), ids.slice(6, 9)];
    // Seen by nobody before the fire: not listed, not counted, not readable by id (not even by a task admin).
    const before = await call(app.url, 'GET', '/api/queue/usertasks/?page_size=0', { token });
    expect(before.status, before.text).toBe(200);
    expect(before.json.count).toBe(0);
    expect((await call(app.url, 'GET', `/api/queue/task/${hidden}/`, { token })).status).toBe(404);
    // Withdrawn after their entries were written: paused, changed (fired anew at its time, with its new arguments), deleted.
    for (const id of paused)
      expect((await call(app.url, 'POST', `/api/queue/schedules/${id}/pause/`, { token, body: {} })).status).toBe(200);
    for (const id of changed) {
      expect((await call(app.url, 'PATCH', `/api/queue/schedules/${id}/`, { token, body: { args: [2, 3] } })).status).toBe(200);
    }
    for (const id of deleted) expect((await call(app.url, 'DELETE', `/api/queue/schedules/${id}/`, { token })).status).toBe(204);
    expect(Date.now(), 'withdrawn before the fire').toBeLessThan(start.getTime());
    const firing = ids.filter((id) => !paused.includes(id) && !deleted.includes(id));
    const schedules = app.ctx.serviceDb.collection('schedules');
    await until(
      async () => (await schedules.countDocuments({ _id: { $in: firing as never[] }, finished: true })) === firing.length,
      60_000,
      'every schedule still firing to finish',
    );
    const all = await runs.find({ schedule_id: { $in: ids } }).toArray();
    expect(all.filter((r) => r.state !== 'published')).toEqual([]);
    expect(all.map((r) => r.schedule_id).sort()).toEqual([...firing].sort());
    const entries = await entriesOf(app, ids);
    expect(entries.filter((e) => e.unpublished_for !== undefined)).toEqual([]);
    expect(new Set(entries.map((e) => e._id))).toEqual(new Set(all.map((r) => r.task_id)));
    expect(entries.filter((e) => changed.some((id) => e.tags.includes(`schedule:${id}`))).map((e) => e.args)).toEqual([
      [2, 3],
      [2, 3],
      [2, 3],
    ]);
    const after = await call(app.url, 'GET', '/api/queue/usertasks/?page_size=0', { token });
    expect(after.json.count).toBe(firing.length);
    await serve.kill();
  }, 180_000);

  it('a process killed after writing them, before their time: another process publishes each once', async () => {
    const { app, ids, start, serve } = await writtenAhead();
    await serve.kill();
    const other = await spawnServe({ ...SERVE_ENV, SERVICE_DATABASE: app.ctx.settings.serviceDatabase });
    serves.push(other);
    const schedules = app.ctx.serviceDb.collection('schedules');
    await until(
      async () => (await schedules.countDocuments({ _id: { $in: ids as never[] }, finished: true })) === BURST,
      90_000,
      'every schedule of the burst to finish',
    );
    const runs = await app.ctx.serviceDb
      .collection<RunDoc>('schedule_runs')
      .find({ schedule_id: { $in: ids } })
      .toArray();
    expect(runs).toHaveLength(BURST);
    expect(runs.filter((r) => r.state !== 'published' || !r.recovered || r.fire_at.getTime() !== start.getTime())).toEqual([]);
    // Published now, not counted as published by the one killed (which never handed them to the broker).
    expect(runs.filter((r) => r.reason !== null)).toEqual([]);
    const entries = await entriesOf(app, ids);
    expect(entries.filter((e) => e.unpublished_for !== undefined)).toEqual([]);
    expect(entries).toHaveLength(BURST);
    expect(new Set(entries.map((e) => e._id))).toEqual(new Set(runs.map((r) => r.task_id)));
    const results = app.ctx.serviceDb.client.db(resultDatabase).collection('tombstone');
    const taskIds = runs.map((r) => r.task_id!) as never[];
    await until(
      async () => (await results.countDocuments({ _id: { $in: taskIds }, status: 'SUCCESS' })) === BURST,
      60_000,
      'every fire run by the worker',
    );
    await other.kill();
  }, 240_000);
});
