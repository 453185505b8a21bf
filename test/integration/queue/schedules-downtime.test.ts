/**
 * Downtime: every API process stopped for a while over a schedule firing every 2 s, then one
 * started again on the same database. With a catch-up window the fires that passed inside it run
 * once, as one catch-up run, and older ones are recorded as missed; without one, every passed fire
 * is missed. Every fire of the schedule's grid is accounted for exactly once: run, covered by the
 * catch-up run, or missed; none is run twice.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { taskCodename } from '../../../src/auth/permissions.js';
import type { RunDoc } from '../../../src/queue/schedules/schedule-store.js';
import type { Worker } from '../../../src/worker/worker.js';
import { call, serviceDatabaseName, startTestApp, uniqueName, type TestApp } from '../../support/app.js';
import { until } from '../../support/until.js';
import { startWorker } from './support.js';

const EVERY_MS = 2_000;
const DOWN_MS = 9_000;
const ENV = { SCHEDULE_MIN_INTERVAL_S: '1', SCHEDULE_GRACE_S: '1', SCHEDULE_TICK_MS: '100' };
const name = serviceDatabaseName();
let worker: Worker;
let queue: string;
let app: TestApp | undefined;

beforeAll(async () => {
  const started = await startWorker(name, uniqueName('dq-'));
  worker = started.worker;
  queue = started.queue;
});

afterAll(async () => {
  await app?.close();
  await worker?.close(1_000).catch(() => undefined);
});

it('catches up once inside the window, records the rest as missed, and doubles nothing', async () => {
  app = await startTestApp({ ...ENV, SERVICE_DATABASE: name });
  const owner = uniqueName('owner');
  await app.users.createUser({
    username: owner,
    password: `pw-${owner}-1`,
    permissions: ['cybercom_queue.schedule_tasks', taskCodename('tasks.add')],
  });
  const token = await app.users.tokenFor(owner);
  const make = async (catchUp: number) => {
    const res = await call(app!.url, 'POST', '/api/queue/schedules/', {
      token,
      body: { name: `every-2s-${catchUp}`, task: 'tasks.add', args: [1, 1], queue, interval: { every: 2 }, catch_up_window: catchUp },
    });
    expect(res.status, res.text).toBe(201);
    return res.json.id as string;
  };
  const withCatchUp = await make(5);
  const without = await make(0);
  const runs = () => app!.ctx.serviceDb.collection<RunDoc>('schedule_runs');
  const published = (id: string) => runs().countDocuments({ schedule_id: id, state: 'published' });
  await until(async () => (await published(withCatchUp)) >= 2 && (await published(without)) >= 2, 15_000, 'fires before the downtime');

  await app.close();
  app = undefined;
  await new Promise((r) => setTimeout(r, DOWN_MS));
  app = await startTestApp({ ...ENV, SERVICE_DATABASE: name });
  const restarted = Date.now();
  const since = (id: string) =>
    runs().countDocuments({ schedule_id: id, state: 'published', kind: 'scheduled', fire_at: { $gte: new Date(restarted) } });
  await until(async () => (await since(withCatchUp)) >= 2 && (await since(without)) >= 2, 15_000, 'fires after the restart');
  await app.ctx.scheduler!.close();

  for (const id of [withCatchUp, without]) {
    const all = await runs().find({ schedule_id: id }).sort({ fire_at: 1 }).toArray();
    const scheduled = all.filter((r) => r.kind === 'scheduled');
    const catchUps = all.filter((r) => r.kind === 'catch_up');
    const missed = all.filter((r) => r.kind === 'missed');
    expect(all.filter((r) => r.state !== 'published' && r.state !== 'missed')).toEqual([]);
    // Every grid fire from the first to the last run accounted for exactly once.
    const ran = [...scheduled, ...catchUps].map((r) => r.fire_at.getTime());
    expect(new Set(ran).size).toBe(ran.length);
    const first = Math.min(...ran);
    const last = Math.max(...ran);
    const accounted = scheduled.length + catchUps.reduce((n, r) => n + r.count, 0) + missed.reduce((n, r) => n + r.count, 0);
    expect(accounted, JSON.stringify(all)).toBe((last - first) / EVERY_MS + 1);
    // The first run after the restart deals with the downtime: one catch-up run for the fires
    // inside the window, one missed record for the older ones. A fire of the downtime that was
    // within the grace at that first look, but later than it when reached on a loaded machine, is
    // caught up or missed on its own after it. Fires due after the restart are published, late on
    // a loaded machine, never caught up or missed.
    expect(
      all.filter((r) => r.kind !== 'scheduled' && r.fire_at.getTime() >= restarted),
      'no catch-up or missed fire after the restart',
    ).toEqual([]);
    if (id === withCatchUp) {
      expect(catchUps.length).toBeGreaterThanOrEqual(1);
      expect(catchUps[0]).toMatchObject({ state: 'published' });
      expect(catchUps[0]!.count).toBeGreaterThanOrEqual(1);
      expect(missed.length).toBeGreaterThanOrEqual(1);
    } else {
      expect(catchUps).toHaveLength(0);
      expect(missed.length).toBeGreaterThanOrEqual(1);
      expect(missed[0]!.count).toBeGreaterThanOrEqual(3);
    }
  }
  const doc = await app.ctx.serviceDb.collection('schedules').findOne({ _id: without as never });
  expect(doc?.missed_total).toBeGreaterThanOrEqual(3);
});
