/**
 * Schedules through the real HTTP server, broker and engine, with a worker consuming the
 * schedules' queue: the endpoints, who may use them, bad input (400, nothing written), fires that
 * become ordinary tasks in the history tagged with their schedule, pause, "run now", an owner
 * deactivated, the overlap policies with a task that outlasts its interval, a claim left by a
 * process that died finished by the scheduler under the same task id (or swept, when its schedule
 * was paused or deleted since), fires withdrawn before their time (revoked only when their message
 * may be out), and a pause made while a fire is being published.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { taskCodename } from '../../../src/auth/permissions.js';
import type { QueueService } from '../../../src/queue/api/queue-service.js';
import { Scheduler } from '../../../src/queue/schedules/scheduler.js';
import { runKey, ScheduleStore, type PublishingDoc, type RunDoc, type ScheduleDoc } from '../../../src/queue/schedules/schedule-store.js';
import type { Worker } from '../../../src/worker/worker.js';
import { call, startTestApp, uniqueName, type TestApp } from '../../support/app.js';
import { until } from '../../support/until.js';
import { createClocked, publishedRun, startWorker } from './support.js';

const SCHEDULE = 'cybercom_queue.schedule_tasks';
let app: TestApp;
let worker: Worker;
let queue: string;
let admin: string;

beforeAll(async () => {
  app = await startTestApp({
    SCHEDULE_MIN_INTERVAL_S: '1',
    SCHEDULE_TICK_MS: '100',
    SCHEDULE_CLAIM_LEASE_S: '2',
    TASK_LIST_CACHE_S: '3600',
  });
  const started = await startWorker(app.ctx.settings.serviceDatabase, uniqueName('sq-'), { concurrency: 4 });
  worker = started.worker;
  queue = started.queue;
  const adminName = uniqueName('admin');
  await app.users.createUser({ username: adminName, password: 'admin-pass-1234', permissions: ['cybercom_queue.task_admin'] });
  admin = await app.users.tokenFor(adminName);
});

afterAll(async () => {
  await worker?.close(1_000).catch(() => undefined);
  await app?.close();
});

async function user(permissions: string[]): Promise<{ name: string; token: string }> {
  const name = uniqueName('u');
  await app.users.createUser({ username: name, password: `pw-${name}-1234`, permissions });
  return { name, token: await app.users.tokenFor(name) };
}

const scheduler = () => ({
  schedules: app.ctx.serviceDb.collection<ScheduleDoc>('schedules'),
  runs: app.ctx.serviceDb.collection<RunDoc>('schedule_runs'),
});

async function create(token: string, body: Record<string, unknown>) {
  return call(app.url, 'POST', '/api/queue/schedules/', { token, body: { queue, ...body } });
}

async function runsOf(token: string, id: string): Promise<Record<string, any>[]> {
  const res = await call(app.url, 'GET', `/api/queue/schedules/${id}/runs/?page_size=0`, { token });
  expect(res.status, res.text).toBe(200);
  return res.json.results;
}

const published = (runs: Record<string, any>[]) => runs.filter((r) => r.state === 'published');

describe('schedule endpoints', () => {
  it('refuses bad input with a clear 400 and writes nothing', async () => {
    const { token } = await user([SCHEDULE, taskCodename('tasks.add')]);
    const before = await scheduler().schedules.countDocuments();
    const cases: [Record<string, unknown>, string][] = [
      [{ name: 'a', task: 'tasks.add', crontab: '0 25 * * *' }, 'invalid_crontab'],
      [{ name: 'a', task: 'tasks.add', crontab: '0 2 * * *', timezone: 'America/Chikago' }, 'unknown_timezone'],
      [{ name: 'a', task: 'tasks.add', interval: { every: 0.5 } }, 'invalid_interval'],
      [{ name: 'a', task: 'tasks.add', solar: { event: 'sunrise', latitude: -89, longitude: 0 } }, 'no_solar_event'],
      [{ name: 'a', task: 'tasks.add', crontab: '* * * * *', overlap: 'never' }, 'invalid_overlap'],
    ];
    // tasks.add(x, y), as the worker's signature says.
    cases.push([{ name: 'a', task: 'tasks.add', args: [1], crontab: '0 2 * * *' }, 'invalid_arguments']);
    cases.push([{ name: 'a', task: 'tasks.add', args: [1, 2], kwargs: { z: 3 }, crontab: '0 2 * * *' }, 'invalid_arguments']);
    for (const [body, code] of cases) {
      const res = await create(token, body);
      expect(res.status, res.text).toBe(400);
      expect(res.json.error.code).toBe(code);
    }
    const tooShort = await startTestApp({ SCHEDULE_MIN_INTERVAL_S: '60' });
    try {
      const adminTooShort = uniqueName('a');
      await tooShort.users.createUser({ username: adminTooShort, password: 'pw-12345678', permissions: ['cybercom_queue.task_admin'] });
      const res = await call(tooShort.url, 'POST', '/api/queue/schedules/', {
        token: await tooShort.users.tokenFor(adminTooShort),
        body: { name: 'a', task: 'tasks.add', interval: { every: 30 } },
      });
      expect(res.status, res.text).toBe(400);
      expect(res.json.error).toMatchObject({ code: 'interval_too_short', detail: { minimum_seconds: 60 } });
    } finally {
      await tooShort.close();
    }
    expect(await scheduler().schedules.countDocuments()).toBe(before);
  });

  it('needs the scheduling right and the right to run the task; others see nothing; task admins see all', async () => {
    const plain = await user([taskCodename('tasks.add')]);
    expect((await create(plain.token, { name: 'x', task: 'tasks.add', crontab: '0 2 * * *' })).status).toBe(403);
    const scheduler1 = await user([SCHEDULE, taskCodename('tasks.add')]);
    expect((await create(scheduler1.token, { name: 'x', task: 'tasks.noop', crontab: '0 2 * * *' })).status).toBe(403);
    const made = await create(scheduler1.token, {
      name: 'nightly',
      task: 'tasks.add',
      args: [1, 2],
      crontab: '0 2 * * *',
      timezone: 'America/Chicago',
    });
    expect(made.status, made.text).toBe(201);
    expect(made.json).toMatchObject({
      name: 'nightly',
      owner: scheduler1.name,
      crontab: '0 2 * * *',
      timezone: 'America/Chicago',
      paused: false,
    });
    expect(made.headers.get('location')).toBe(made.json.url);
    const again = await create(scheduler1.token, { name: 'nightly', task: 'tasks.add', args: [1, 2], crontab: '0 3 * * *' });
    expect(again.status).toBe(409);

    const other = await user([SCHEDULE, taskCodename('tasks.add')]);
    expect((await call(app.url, 'GET', `/api/queue/schedules/${made.json.id}/`, { token: other.token })).status).toBe(404);
    expect((await call(app.url, 'GET', '/api/queue/schedules/', { token: other.token })).json.count).toBe(0);
    const all = await call(app.url, 'GET', '/api/queue/schedules/?page_size=0', { token: admin });
    expect(all.json.results.map((s: { id: string }) => s.id)).toContain(made.json.id);

    // A task no live worker offers: accepted, with a warning, and the list says so too.
    const unoffered = await create(scheduler1.token, { name: 'someday', task: 'tasks.add_later', crontab: '0 3 * * *' });
    expect(unoffered.status).toBe(403);
    const adminMade = await create(admin, { name: 'someday', task: 'lab.not_running_anywhere', crontab: '0 3 * * *' });
    expect(adminMade.status, adminMade.text).toBe(201);
    expect(adminMade.json.warnings).toEqual([expect.stringMatching(/No live worker offers "lab.not_running_anywhere"/)]);
    const listed = (await call(app.url, 'GET', '/api/queue/schedules/?page_size=0', { token: admin })).json.results;
    expect(listed.find((s: { id: string }) => s.id === adminMade.json.id).warnings).toHaveLength(1);
    expect(listed.find((s: { id: string }) => s.id === made.json.id).warnings).toBeUndefined();
    await call(app.url, 'DELETE', `/api/queue/schedules/${adminMade.json.id}/`, { token: admin });

    const next = await call(app.url, 'GET', `/api/queue/schedules/${made.json.id}/next/`, { token: scheduler1.token });
    expect(next.status).toBe(200);
    const times: string[] = next.json.next_fire_times;
    expect(times).toHaveLength(10);
    for (const t of times)
      expect(new Date(t).toLocaleString('en-US', { timeZone: 'America/Chicago', hour: 'numeric', hour12: false })).toBe('02');
    expect([...times].sort()).toEqual(times);

    const patched = await call(app.url, 'PATCH', `/api/queue/schedules/${made.json.id}/`, {
      token: scheduler1.token,
      body: { interval: { every: 1, period: 'hours' } },
    });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.json.crontab).toBeUndefined();
    expect(patched.json.interval).toMatchObject({ every: 1, period: 'hours' });
    expect((await call(app.url, 'DELETE', `/api/queue/schedules/${made.json.id}/`, { token: scheduler1.token })).status).toBe(204);
    expect((await call(app.url, 'GET', `/api/queue/schedules/${made.json.id}/`, { token: scheduler1.token })).status).toBe(404);
  });

  it('fires every second as ordinary tasks tagged with the schedule; paused fires none; run now makes one run', async () => {
    const owner = await user([SCHEDULE, taskCodename('tasks.add')]);
    const made = await create(owner.token, { name: 'every-second', task: 'tasks.add', args: [2, 3], interval: { every: 1 } });
    expect(made.status, made.text).toBe(201);
    const id = made.json.id as string;
    await until(async () => published(await runsOf(owner.token, id)).length >= 3, 15_000, 'three fires');
    const paused = await call(app.url, 'POST', `/api/queue/schedules/${id}/pause/`, { token: owner.token, body: { note: 'gauges down' } });
    expect(paused.json).toMatchObject({ paused: true, note: 'gauges down', next_fire_at: null });
    await new Promise((r) => setTimeout(r, 500));
    const atPause = published(await runsOf(owner.token, id)).length;

    const history = await call(app.url, 'GET', `/api/queue/usertasks/?tag=schedule:${id}&page_size=0`, { token: owner.token });
    expect(history.json.count).toBe(atPause);
    const fires = published(await runsOf(owner.token, id));
    expect(new Set(fires.map((r) => r.task_id)).size).toBe(fires.length);
    expect(new Set(fires.map((r) => r.fire_at)).size).toBe(fires.length);
    for (const r of fires) expect(Date.parse(r.fire_at) % 1000).toBe(Date.parse(made.json.interval.anchor) % 1000);
    const result = await call(app.url, 'GET', `/api/queue/task/${fires[0]!.task_id}/?wait=10`, { token: owner.token });
    expect(result.json).toMatchObject({ status: 'SUCCESS', result: 5, tags: [`schedule:${id}`] });

    await new Promise((r) => setTimeout(r, 2_500));
    expect(published(await runsOf(owner.token, id)).length).toBe(atPause);

    const now = await call(app.url, 'POST', `/api/queue/schedules/${id}/run/`, { token: owner.token });
    expect(now.status, now.text).toBe(202);
    const manual = (await runsOf(owner.token, id)).filter((r) => r.kind === 'manual');
    expect(manual).toHaveLength(1);
    expect(manual[0]!.task_id).toBe(now.json.task_id);
    expect((await call(app.url, 'GET', `/api/queue/task/${now.json.task_id}/?wait=10`, { token: owner.token })).json.status).toBe(
      'SUCCESS',
    );

    const superuser = uniqueName('root');
    await app.users.createUser({ username: superuser, password: 'root-pass-1234', isSuperuser: true });
    const metrics = await call(app.url, 'GET', '/api/metrics', { token: await app.users.tokenFor(superuser), accept: 'text/plain' });
    const published_ = /^cybercom_schedule_fires_total\{kind="scheduled",outcome="published"\} (\d+)$/m.exec(metrics.text);
    expect(Number(published_?.[1])).toBeGreaterThanOrEqual(atPause);
    expect(metrics.text).toMatch(/^cybercom_schedule_fires_total\{kind="manual",outcome="published"\} 1$/m);
    expect(metrics.text).toMatch(/^cybercom_schedule_fire_lateness_seconds_bucket\{le="1",kind="scheduled"\} \d+$/m);
    expect(metrics.text).toMatch(/^cybercom_schedule_missed_runs_total 0$/m);

    const resumed = await call(app.url, 'POST', `/api/queue/schedules/${id}/resume/`, { token: owner.token });
    expect(resumed.json.paused).toBe(false);
    await until(async () => published(await runsOf(owner.token, id)).length >= atPause + 3, 15_000, 'fires after resuming');
    await call(app.url, 'DELETE', `/api/queue/schedules/${id}/`, { token: owner.token });
  });

  it('stops firing when the owner is deactivated, and says why', async () => {
    const owner = await user([SCHEDULE, taskCodename('tasks.add')]);
    const made = await create(owner.token, { name: 'until-deactivated', task: 'tasks.add', args: [1, 1], interval: { every: 1 } });
    const id = made.json.id as string;
    await until(async () => published(await runsOf(owner.token, id)).length >= 1, 15_000, 'a first fire');
    await app.ctx.auth.models.User.updateOne({ username: owner.name }, { $set: { is_active: false } });
    const refused = await until(
      async () => (await scheduler().runs.find({ schedule_id: id, state: 'refused' }).toArray()).length >= 2,
      15_000,
      'refused fires',
    );
    expect(refused).toBe(true);
    const before = await scheduler().runs.countDocuments({ schedule_id: id, state: 'published' });
    await new Promise((r) => setTimeout(r, 2_000));
    expect(await scheduler().runs.countDocuments({ schedule_id: id, state: 'published' })).toBe(before);
    const doc = await scheduler().schedules.findOne({ _id: id });
    expect(doc).toMatchObject({ last_outcome: 'refused', last_reason: expect.stringMatching(/inactive/) });
    expect(doc!.failure_streak).toBeGreaterThanOrEqual(2);
    await scheduler().schedules.deleteOne({ _id: id });
  });
});

describe('overlap policies, with a task that outlasts its 1 s interval', () => {
  async function overlapping(policy: string) {
    const owner = await user([SCHEDULE, taskCodename('tasks.sleep')]);
    const made = await create(owner.token, {
      name: `sleepy-${policy}`,
      task: 'tasks.sleep',
      args: [2.5],
      interval: { every: 1 },
      overlap: policy,
    });
    expect(made.status, made.text).toBe(201);
    const id = made.json.id as string;
    await new Promise((r) => setTimeout(r, 6_500));
    await call(app.url, 'POST', `/api/queue/schedules/${id}/pause/`, { token: owner.token });
    return { id, runs: await runsOf(owner.token, id), owner };
  }

  it('skip: a fire while the last run has not finished is skipped', async () => {
    const { runs } = await overlapping('skip');
    const states = runs.map((r) => r.state);
    expect(states.filter((s) => s === 'published').length).toBeGreaterThanOrEqual(2);
    expect(states.filter((s) => s === 'published').length).toBeLessThanOrEqual(3);
    expect(states.filter((s) => s === 'skipped').length).toBeGreaterThanOrEqual(3);
  });

  it('buffer_one: one fire waits for the last run and is published when it finishes; more are skipped', async () => {
    const { id, runs } = await overlapping('buffer_one');
    const buffered = runs.filter((r) => r.reason !== null && /waits for the last run/.test(r.reason));
    expect(buffered.length).toBeGreaterThanOrEqual(1);
    // A buffered fire is published once the run before it finished: later than its own time.
    expect(buffered.filter((r) => r.state === 'published').length).toBeGreaterThanOrEqual(1);
    expect(runs.filter((r) => r.state === 'skipped').length).toBeGreaterThanOrEqual(1);
    const doc = await scheduler().schedules.findOne({ _id: id });
    expect(doc!.total_runs).toBe(runs.filter((r) => r.state === 'published').length);
  });

  it('cancel_previous: the running run is terminated and the new fire published', async () => {
    const { runs, owner } = await overlapping('cancel_previous');
    const fires = published(runs);
    expect(fires.length).toBeGreaterThanOrEqual(5);
    const states = await Promise.all(
      fires.slice(1).map(async (r) => (await call(app.url, 'GET', `/api/queue/task/${r.task_id}/`, { token: owner.token })).json.status),
    );
    expect(states.filter((s) => s === 'REVOKED').length).toBeGreaterThanOrEqual(3);
  });
});

describe('a claim left by a process that died', () => {
  async function clockedSoon(owner: { token: string }) {
    const at = new Date(Math.ceil((Date.now() + 2_500) / 1000) * 1000);
    const made = await create(owner.token, { name: uniqueName('once-'), task: 'tasks.add', args: [4, 4], clocked: at.toISOString() });
    expect(made.status, made.text).toBe(201);
    return { id: made.json.id as string, at };
  }

  function deadClaim(id: string, at: Date, taskId: string): RunDoc {
    return {
      _id: runKey(id, at),
      schedule_id: id,
      kind: 'scheduled',
      fire_at: at,
      state: 'claimed',
      task_id: taskId,
      claimed_by: 'a-process-that-was-killed',
      claimed_at: new Date(),
      lease_until: new Date(at.getTime() + 1_500),
      published_at: null,
      lateness_ms: null,
      reason: null,
      count: 1,
      recovered: false,
    };
  }

  it('before it published: taken over when its lease runs out, and published once under its task id', async () => {
    const owner = await user([SCHEDULE, taskCodename('tasks.add')]);
    const { id, at } = await clockedSoon(owner);
    const taskId = `dead-claim-${uniqueName()}`;
    await scheduler().runs.insertOne(deadClaim(id, at, taskId));
    const run = await until(
      async () => (await scheduler().runs.findOne({ _id: runKey(id, at), state: 'published' })) ?? undefined,
      15_000,
      'the claim to be finished',
    );
    expect(run).toMatchObject({ task_id: taskId, recovered: true });
    expect(Date.now()).toBeGreaterThanOrEqual(at.getTime() + 1_500);
    const result = await call(app.url, 'GET', `/api/queue/task/${taskId}/?wait=10`, { token: owner.token });
    expect(result.json).toMatchObject({ status: 'SUCCESS', result: 8 });
    const history = await call(app.url, 'GET', `/api/queue/usertasks/?tag=schedule:${id}`, { token: owner.token });
    expect(history.json.count).toBe(1);
    expect(await scheduler().schedules.findOne({ _id: id })).toMatchObject({ finished: true, total_runs: 1, next_fire_at: null });
  });

  it('whose lease outlasted the on-time grace: still published, not taken for a missed fire', async () => {
    const graceApp = await startTestApp({ SCHEDULE_GRACE_S: '1', SCHEDULE_TICK_MS: '100', TASK_LIST_CACHE_S: '3600' });
    try {
      const name = uniqueName('g');
      await graceApp.users.createUser({ username: name, password: `pw-${name}-1234`, permissions: [SCHEDULE, taskCodename('tasks.add')] });
      const token = await graceApp.users.tokenFor(name);
      const at = new Date(Math.ceil((Date.now() + 2_500) / 1000) * 1000);
      const made = await call(graceApp.url, 'POST', '/api/queue/schedules/', {
        token,
        body: { name: 'once', task: 'tasks.add', args: [4, 4], queue, interval: { every: 3600, anchor: at.toISOString() } },
      });
      expect(made.status, made.text).toBe(201);
      const id = made.json.id as string;
      const taskId = `dead-claim-${uniqueName()}`;
      const runs = graceApp.ctx.serviceDb.collection<RunDoc>('schedule_runs');
      // Its lease runs out 3 s after the fire's time: by then the fire is later than the 1 s grace.
      await runs.insertOne({ ...deadClaim(id, at, taskId), lease_until: new Date(at.getTime() + 3_000) });
      const run = await until(
        async () => (await runs.findOne({ _id: runKey(id, at), state: { $ne: 'claimed' } })) ?? undefined,
        15_000,
        'the claim to be finished',
      );
      expect(run).toMatchObject({ state: 'published', task_id: taskId, recovered: true });
      expect(await runs.countDocuments({ schedule_id: id, kind: 'missed' })).toBe(0);
      // The worker writes its results where the file's main app reads them.
      expect(await app.ctx.queue!.waitForResult(taskId, 10)).toMatchObject({ status: 'SUCCESS', result: 8 });
    } finally {
      await graceApp.close();
    }
  });

  it('after it wrote the history entry: counted as published, not published again', async () => {
    const owner = await user([SCHEDULE, taskCodename('tasks.add')]);
    const { id, at } = await clockedSoon(owner);
    const taskId = `dead-claim-${uniqueName()}`;
    await scheduler().runs.insertOne(deadClaim(id, at, taskId));
    const doc = (await scheduler().schedules.findOne({ _id: id }))!;
    await app.ctx.queue!.log.record(historyEntry(doc, id, taskId));
    const run = await until(
      async () => (await scheduler().runs.findOne({ _id: runKey(id, at), state: 'published' })) ?? undefined,
      15_000,
      'the claim to be finished',
    );
    expect(run).toMatchObject({ task_id: taskId, recovered: true, reason: expect.stringMatching(/not published again/) });
    await new Promise((r) => setTimeout(r, 1_500));
    // Never published by the scheduler: no worker ever ran it.
    expect((await call(app.url, 'GET', `/api/queue/task/${taskId}/`, { token: owner.token })).json.status).toBe('PENDING');
  });
  /** The history entry of the fire `taskId` of schedule `id`, as the scheduler records it. */
  function historyEntry(doc: { owner_id: string; owner: string }, id: string, taskId: string) {
    return {
      task_id: taskId,
      user_id: doc.owner_id,
      user: doc.owner,
      task_name: 'tasks.add',
      args: [4, 4],
      kwargs: {},
      queue,
      tags: [`schedule:${id}`],
      timestamp: new Date(),
    };
  }
  /** The fire's history entry as the scheduler writes it ahead of a burst's fires: seen by nobody yet. */
  async function writtenAhead(id: string, taskId: string): Promise<void> {
    const doc = (await scheduler().schedules.findOne({ _id: id }))!;
    const failed = await app.ctx.queue!.log.recordMany([historyEntry(doc, id, taskId)], true);
    expect(failed).toEqual([null]);
  }

  it('after it wrote the history entry ahead of the fire: nobody sees it; taken over, it is published once', async () => {
    const owner = await user([SCHEDULE, taskCodename('tasks.add')]);
    const { id, at } = await clockedSoon(owner);
    const taskId = `dead-claim-${uniqueName()}`;
    await scheduler().runs.insertOne(deadClaim(id, at, taskId));
    await writtenAhead(id, taskId);
    // Not listed, counted or readable by id, by its owner or a task admin, while unpublished.
    for (const token of [owner.token, admin]) {
      expect((await call(app.url, 'GET', `/api/queue/task/${taskId}/`, { token })).status).toBe(404);
      expect((await call(app.url, 'GET', `/api/queue/usertasks/?tag=schedule:${id}`, { token })).json.count).toBe(0);
    }
    const run = await until(
      async () => (await scheduler().runs.findOne({ _id: runKey(id, at), state: 'published' })) ?? undefined,
      15_000,
      'the claim to be finished',
    );
    expect(run).toMatchObject({ task_id: taskId, recovered: true, reason: null });
    const result = await call(app.url, 'GET', `/api/queue/task/${taskId}/?wait=10`, { token: owner.token });
    expect(result.json).toMatchObject({ status: 'SUCCESS', result: 8 });
    const history = await call(app.url, 'GET', `/api/queue/usertasks/?tag=schedule:${id}`, { token: owner.token });
    expect(history.json.count).toBe(1);
    expect(await app.ctx.serviceDb.collection('task_log').countDocuments({ _id: taskId as never })).toBe(1);
  });

  it('after it wrote the claim down as being published: counted as published, its entry given to the owner, not published again', async () => {
    const owner = await user([SCHEDULE, taskCodename('tasks.add')]);
    const { id, at } = await clockedSoon(owner);
    const taskId = `dead-claim-${uniqueName()}`;
    await scheduler().runs.insertOne(deadClaim(id, at, taskId));
    await app.ctx.serviceDb
      .collection<PublishingDoc>('schedule_publishing')
      .insertOne({ _id: uniqueName('mark-'), runs: [runKey(id, at)], by: 'a-process-that-was-killed', at: new Date() });
    await writtenAhead(id, taskId);
    const run = await until(
      async () => (await scheduler().runs.findOne({ _id: runKey(id, at), state: 'published' })) ?? undefined,
      15_000,
      'the claim to be finished',
    );
    expect(run).toMatchObject({ task_id: taskId, recovered: true, reason: expect.stringMatching(/not published again/) });
    const history = await call(app.url, 'GET', `/api/queue/usertasks/?tag=schedule:${id}`, { token: owner.token });
    expect(history.json.results.map((r: { task_id: string }) => r.task_id)).toEqual([taskId]);
    await new Promise((r) => setTimeout(r, 1_500));
    // Never published by the scheduler: no worker ever ran it.
    expect((await call(app.url, 'GET', `/api/queue/task/${taskId}/`, { token: owner.token })).json.status).toBe('PENDING');
  });

  it('of a schedule paused or deleted since: swept once its lease is long past; a live claim and its entry are left alone', async () => {
    const owner = await user([SCHEDULE, taskCodename('tasks.add')]);
    const later = new Date(Date.now() + 3_600_000).toISOString();
    const pausedSchedule = async () => {
      const made = await create(owner.token, { name: uniqueName('left-'), task: 'tasks.add', args: [4, 4], clocked: later, paused: true });
      expect(made.status, made.text).toBe(201);
      return made.json.id as string;
    };
    const [unmarked, marked, live, deleted] = [
      await pausedSchedule(),
      await pausedSchedule(),
      await pausedSchedule(),
      await pausedSchedule(),
    ];
    const fire = new Date(Date.now() - 60_000);
    const old = new Date(Date.now() - 60_000);
    const taskOf = Object.fromEntries([unmarked, marked, live, deleted].map((id) => [id, `left-${uniqueName()}`]));
    const entries = app.ctx.serviceDb.collection('task_log');
    const marks = app.ctx.serviceDb.collection<PublishingDoc>('schedule_publishing');
    // What a process killed after writing them leaves, as it writes them (its entries written a minute ago).
    for (const id of [unmarked, marked, live]) {
      await scheduler().runs.insertOne({ ...deadClaim(id, fire, taskOf[id]!), lease_until: new Date(fire.getTime() + 2_000) });
      await writtenAhead(id, taskOf[id]!);
      await entries.updateOne({ _id: taskOf[id] as never }, { $set: { timestamp: old } });
    }
    // A claim still held (its lease runs for another minute): its process may still publish it.
    await scheduler().runs.updateOne({ _id: runKey(live, fire) }, { $set: { lease_until: new Date(Date.now() + 60_000) } });
    const markedMark = uniqueName('mark-');
    await marks.insertOne({ _id: markedMark, runs: [runKey(marked, fire)], by: 'a-process-that-was-killed', at: old });
    // A deleted schedule's entry and mark: the claim went with the schedule's run log.
    await writtenAhead(deleted, taskOf[deleted]!);
    await entries.updateOne({ _id: taskOf[deleted] as never }, { $set: { timestamp: old } });
    const deletedMark = uniqueName('mark-');
    await marks.insertOne({ _id: deletedMark, runs: [runKey(deleted, fire)], by: 'a-process-that-was-killed', at: old });
    await scheduler().schedules.deleteOne({ _id: deleted });

    await until(
      async () =>
        (await scheduler().runs.countDocuments({ _id: { $in: [runKey(unmarked, fire), runKey(marked, fire)] }, state: 'claimed' })) === 0 &&
        (await entries.countDocuments({ _id: taskOf[deleted] as never })) === 0 &&
        (await marks.countDocuments({ _id: { $in: [markedMark, deletedMark] } })) === 0,
      15_000,
      'the leftovers swept',
    );
    // Never handed to the broker: the claim and its hidden entry are gone, no result recorded.
    expect(await scheduler().runs.countDocuments({ schedule_id: unmarked })).toBe(0);
    expect(await entries.countDocuments({ _id: taskOf[unmarked] as never })).toBe(0);
    expect((await app.ctx.queue!.results.get(taskOf[unmarked]!)).status).toBe('PENDING');
    // Written down as being published: counted as published, its entry given to the owner, not published again.
    expect(await scheduler().runs.findOne({ _id: runKey(marked, fire) })).toMatchObject({
      state: 'published',
      recovered: true,
      task_id: taskOf[marked],
      reason: expect.stringMatching(/not published again/),
    });
    const history = await call(app.url, 'GET', `/api/queue/usertasks/?tag=schedule:${marked}`, { token: owner.token });
    expect(history.json.results.map((r: { task_id: string }) => r.task_id)).toEqual([taskOf[marked]]);
    expect((await app.ctx.queue!.results.get(taskOf[marked]!)).status).toBe('PENDING');
    // The live claim and its entry stay as they are.
    expect(await scheduler().runs.findOne({ _id: runKey(live, fire) })).toMatchObject({ state: 'claimed', task_id: taskOf[live] });
    expect(await entries.findOne({ _id: taskOf[live] as never })).toMatchObject({ unpublished_for: expect.any(String) });
    expect(await scheduler().schedules.findOne({ _id: unmarked })).toMatchObject({ paused: true, due_at: null });
  });
});

describe('a fire published ahead of its time (a burst begins its publishing early, with an eta)', () => {
  /**
   * A one-off schedule at `at` whose fire another process claimed and published ahead of its
   * time, as a burst's are: its claim (due at `at`, its lease still held), its history entry,
   * and its message with `at` as its eta, which the worker holds until then.
   */
  async function publishedAhead(owner: { name: string; token: string }, at: Date): Promise<{ id: string; taskId: string }> {
    const made = await create(owner.token, { name: uniqueName('ahead-'), task: 'tasks.add', args: [4, 4], clocked: at.toISOString() });
    expect(made.status, made.text).toBe(201);
    const id = made.json.id as string;
    const taskId = `ahead-${uniqueName()}`;
    await scheduler().runs.insertOne({
      _id: runKey(id, at),
      schedule_id: id,
      kind: 'scheduled',
      fire_at: at,
      state: 'published',
      task_id: taskId,
      claimed_by: 'another-process',
      claimed_at: new Date(),
      lease_until: new Date(at.getTime() + 60_000),
      published_at: new Date(),
      lateness_ms: 0,
      reason: null,
      count: 1,
      recovered: false,
      due_at: at,
    });
    const doc = (await scheduler().schedules.findOne({ _id: id }))!;
    await app.ctx.queue!.submit(
      { username: owner.name, isSuperuser: false, dataStorePermissions: [] },
      doc.owner_id,
      'tasks.add',
      { args: [4, 4], kwargs: {}, tags: [`schedule:${id}`], queue },
      queue,
      { taskId, eta: at },
    );
    return { id, taskId };
  }

  it('deleted, paused or changed before its time: revoked, never run; a changed one fires anew as it is now', async () => {
    const owner = await user([SCHEDULE, taskCodename('tasks.add')]);
    const at = new Date(Math.ceil((Date.now() + 6_000) / 1000) * 1000);
    const [deleted, paused, changed] = [await publishedAhead(owner, at), await publishedAhead(owner, at), await publishedAhead(owner, at)];
    expect((await call(app.url, 'DELETE', `/api/queue/schedules/${deleted.id}/`, { token: owner.token })).status).toBe(204);
    expect((await call(app.url, 'POST', `/api/queue/schedules/${paused.id}/pause/`, { token: owner.token, body: {} })).status).toBe(200);
    const patched = await call(app.url, 'PATCH', `/api/queue/schedules/${changed.id}/`, { token: owner.token, body: { args: [5, 5] } });
    expect(patched.status, patched.text).toBe(200);
    expect(Date.now(), 'withdrawn before the fire').toBeLessThan(at.getTime());
    await new Promise((r) => setTimeout(r, Math.max(0, at.getTime() - Date.now()) + 2_000));
    for (const { taskId } of [deleted, paused, changed]) {
      expect((await app.ctx.queue!.results.get(taskId)).status, taskId).toBe('REVOKED');
    }
    // The changed schedule fired at its time once more, under a new task, with its new arguments.
    const runs = await scheduler().runs.find({ schedule_id: changed.id }).toArray();
    expect(runs.map((r) => [r.state, r.fire_at.getTime()])).toEqual([['published', at.getTime()]]);
    expect(runs[0]!.task_id).not.toBe(changed.taskId);
    expect(await app.ctx.queue!.waitForResult(runs[0]!.task_id!, 10)).toMatchObject({ status: 'SUCCESS', result: 10 });
    expect(await scheduler().runs.countDocuments({ schedule_id: paused.id })).toBe(0);
    expect(await scheduler().schedules.findOne({ _id: paused.id })).toMatchObject({ paused: true, due_at: null });
  });
});

describe('a burst claimed ahead, paused well before its publishing begins', () => {
  it('leaves no REVOKED result for the paused fires, which never run; the others are published', async () => {
    const owner = await user([SCHEDULE, taskCodename('tasks.add')]);
    const at = new Date(Math.ceil((Date.now() + 13_000) / 1000) * 1000);
    const made = await create(owner.token, { name: uniqueName('burst-'), task: 'tasks.add', args: [2, 2], clocked: at.toISOString() });
    expect(made.status, made.text).toBe(201);
    const first = (await scheduler().schedules.findOne({ _id: made.json.id }))!;
    // Enough schedules due at the same second for the scheduler to claim them ahead (a burst).
    const copies = Array.from({ length: 249 }, () => ({ ...first, _id: randomUUID(), name: uniqueName('burst-') }));
    await scheduler().schedules.insertMany(copies);
    const pausedIds = copies.slice(0, 3).map((c) => c._id);
    const claims = await until(
      async () => {
        const found = await scheduler()
          .runs.find({ schedule_id: { $in: pausedIds }, state: 'claimed' })
          .toArray();
        return found.length === pausedIds.length ? found : undefined;
      },
      5_000,
      'the burst claimed ahead',
    );
    for (const id of pausedIds) {
      expect((await call(app.url, 'POST', `/api/queue/schedules/${id}/pause/`, { token: owner.token, body: {} })).status).toBe(200);
    }
    expect(Date.now(), 'paused well before the burst begins publishing').toBeLessThan(at.getTime() - 7_000);
    await new Promise((r) => setTimeout(r, Math.max(0, at.getTime() - Date.now()) + 3_000));
    for (const claim of claims) {
      expect((await app.ctx.queue!.results.get(claim.task_id!)).status, claim.task_id!).toBe('PENDING');
      expect(await app.ctx.serviceDb.collection('task_log').countDocuments({ _id: claim.task_id as never })).toBe(0);
    }
    expect(await scheduler().runs.countDocuments({ schedule_id: { $in: pausedIds } })).toBe(0);
    // The rest of the burst went out at its time.
    const fired = await scheduler().runs.findOne({ schedule_id: first._id, state: 'published' });
    expect(fired).not.toBeNull();
    expect(await app.ctx.queue!.waitForResult(fired!.task_id!, 10)).toMatchObject({ status: 'SUCCESS', result: 4 });
    // Never published, so never run.
    for (const claim of claims) expect((await app.ctx.queue!.results.get(claim.task_id!)).status).toBe('PENDING');
  });
});

describe('a schedule paused while its fire is being published', () => {
  it('stays paused: the advance after the publishing does not undo the pause', async () => {
    // An app whose own scheduler is off, and a scheduler over its store and queue whose
    // publishing of a fire waits until the test has paused the schedule.
    const pauseApp = await startTestApp({ SCHEDULER_ENABLED: 'false', SCHEDULE_MIN_INTERVAL_S: '1', TASK_LIST_CACHE_S: '3600' });
    let scheduler: Scheduler | undefined;
    try {
      const name = uniqueName('p');
      await pauseApp.users.createUser({ username: name, password: `pw-${name}-1234`, permissions: [SCHEDULE, taskCodename('tasks.add')] });
      const token = await pauseApp.users.tokenFor(name);
      const real = pauseApp.ctx.queue!;
      let reached!: () => void;
      const publishing = new Promise<void>((resolve) => (reached = resolve));
      let open!: () => void;
      const gate = new Promise<void>((resolve) => (open = resolve));
      const gated = new Proxy(real, {
        get(target, property) {
          if (property === 'recordMany') {
            return async (items: Parameters<QueueService['recordMany']>[0]) => {
              const publish = await target.recordMany(items);
              return async () => {
                reached();
                await gate;
                return publish();
              };
            };
          }
          const value: unknown = Reflect.get(target, property, target);
          return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        },
      });
      scheduler = new Scheduler({
        store: new ScheduleStore(pauseApp.ctx.serviceDb),
        queue: gated,
        owner: (userId) => pauseApp.ctx.auth.scheduleOwner(userId),
        logger: pauseApp.ctx.logger,
        tickMs: 100,
        claimLeaseMs: 30_000,
        graceMs: 10_000,
      }).start();
      const anchor = new Date(Math.ceil((Date.now() + 1_500) / 1000) * 1000);
      const made = await call(pauseApp.url, 'POST', '/api/queue/schedules/', {
        token,
        body: { name: 'minutely', task: 'tasks.add', args: [1, 1], queue, interval: { every: 60, anchor: anchor.toISOString() } },
      });
      expect(made.status, made.text).toBe(201);
      const id = made.json.id as string;
      await publishing;
      const paused = await call(pauseApp.url, 'POST', `/api/queue/schedules/${id}/pause/`, { token, body: { note: 'mid-fire' } });
      expect(paused.status, paused.text).toBe(200);
      open();
      const runs = pauseApp.ctx.serviceDb.collection<RunDoc>('schedule_runs');
      await until(async () => (await runs.findOne({ schedule_id: id, state: 'published' })) !== null, 10_000, 'the fire published');
      await scheduler.close();
      expect(await pauseApp.ctx.serviceDb.collection<ScheduleDoc>('schedules').findOne({ _id: id })).toMatchObject({
        paused: true,
        due_at: null,
        note: 'mid-fire',
      });
    } finally {
      await scheduler?.close();
      await pauseApp.close();
    }
  });
});

describe('a scheduler with nothing due', () => {
  it('is woken by a schedule made through its own process and fires it on time, though it looks less often while idle', async () => {
    // Ticks 10 s apart: unwoken, a fire made 2 s before its time would wait for the next look (up
    // to 8 s late); woken, it is published at its time, plus what publishing takes on a busy
    // machine. (2 s: a creation may first ask the workers which tasks they offer, up to a second.)
    const idleApp = await startTestApp({ SCHEDULE_TICK_MS: '10000' });
    try {
      const name = uniqueName('w');
      await idleApp.users.createUser({ username: name, password: `pw-${name}-1234`, permissions: [SCHEDULE, taskCodename('tasks.add')] });
      const token = await idleApp.users.tokenFor(name);
      const runs = idleApp.ctx.serviceDb.collection<RunDoc>('schedule_runs');
      for (let i = 0; i < 3; i++) {
        const at = new Date(Date.now() + 2_000);
        const id = await createClocked(idleApp.url, token, { prefix: 'soon-', args: [1, 1], queue, at });
        const run = await publishedRun(runs, id, 8_000);
        expect(run.lateness_ms, `fire ${i}`).toBeLessThan(1_500);
      }
    } finally {
      await idleApp.close();
    }
  });
});

describe('a scheduler that fell behind', () => {
  it('publishes a fire it reached later than the grace, late, instead of recording it missed', async () => {
    const behindApp = await startTestApp({ SCHEDULE_GRACE_S: '1', SCHEDULE_TICK_MS: '100', SCHEDULE_MIN_INTERVAL_S: '1' });
    try {
      const name = uniqueName('b');
      await behindApp.users.createUser({ username: name, password: `pw-${name}-1234`, permissions: [SCHEDULE, taskCodename('tasks.add')] });
      const token = await behindApp.users.tokenFor(name);
      const made = await call(behindApp.url, 'POST', '/api/queue/schedules/', {
        token,
        body: { name: 'hourly', task: 'tasks.add', args: [1, 1], queue, interval: { every: 3600 }, paused: true },
      });
      expect(made.status, made.text).toBe(201);
      const id = made.json.id as string;
      // A fire that came due 3 s ago (three times the grace), while this scheduler was running, and
      // that it has not dealt with yet: what a scheduler with more fires due at once than it can
      // publish in the grace sees. It was slow, not down: the fire is published, late.
      await new Promise((r) => setTimeout(r, 4_000));
      const fire = new Date(Date.now() - 3_000);
      const schedules = behindApp.ctx.serviceDb.collection<ScheduleDoc>('schedules');
      const runs = behindApp.ctx.serviceDb.collection<RunDoc>('schedule_runs');
      await schedules.updateOne({ _id: id }, { $set: { paused: false, next_fire_at: fire, due_at: fire } });
      await until(
        async () => (await runs.countDocuments({ schedule_id: id, state: { $ne: 'claimed' } })) > 0,
        10_000,
        'the late fire dealt with',
      );
      const all = await runs.find({ schedule_id: id }).toArray();
      expect(all, JSON.stringify(all)).toHaveLength(1);
      expect(all[0]).toMatchObject({ kind: 'scheduled', state: 'published', fire_at: fire, count: 1 });
      expect(all[0]!.lateness_ms).toBeGreaterThanOrEqual(3_000);
      expect(await schedules.findOne({ _id: id })).toMatchObject({ missed_total: 0, total_runs: 1, last_outcome: 'published' });
    } finally {
      await behindApp.close();
    }
  });
});
