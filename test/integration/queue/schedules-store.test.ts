/**
 * The run log's bulk completion on the real engine: the fires of a burst completed alike are one
 * update per chunk, and each caller still learns which of its claims it completed, including when
 * another process took one over meanwhile (its lease ran out) and one completes with other fields.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ScheduleStore, type RunDoc } from '../../../src/queue/schedules/schedule-store.js';
import { startTestApp, type TestApp } from '../../support/app.js';

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp({ SCHEDULER_ENABLED: 'false' });
});

afterAll(async () => {
  await app?.close();
});

const claim = (id: string, by: string, now: Date): RunDoc => ({
  _id: id,
  schedule_id: id.split('@')[0]!,
  kind: 'scheduled',
  fire_at: now,
  state: 'claimed',
  task_id: `task-${id}`,
  claimed_by: by,
  claimed_at: now,
  lease_until: new Date(now.getTime() - 1),
  published_at: null,
  lateness_ms: null,
  reason: null,
  count: 1,
  recovered: false,
});

it('completes the caller’s own claims in bulk and tells which were no longer its own', async () => {
  const store = new ScheduleStore(app.ctx.serviceDb);
  const now = new Date();
  const ids = Array.from({ length: 1_205 }, (_, i) => `s${i}@${now.toISOString()}`);
  expect(await store.claimMany(ids.map((id) => claim(id, 'a', now)))).toEqual(ids.map(() => true));
  // Two taken over by another process, whose lease ran out.
  expect(await store.takeOver(ids[3]!, 'b', new Date(), new Date(Date.now() + 60_000))).toBe(true);
  expect(await store.takeOver(ids[1_100]!, 'b', new Date(), new Date(Date.now() + 60_000))).toBe(true);
  const published: Partial<RunDoc> = { state: 'published', published_at: now, lateness_ms: 12 };
  const failed: Partial<RunDoc> = { state: 'failed', reason: 'refused by the broker' };
  const done = await store.completeMany(ids.map((id, i) => ({ id, by: 'a', fields: i % 100 === 7 ? failed : published })));
  expect(done).toEqual(ids.map((_, i) => i !== 3 && i !== 1_100));
  const runs = new Map((await store.getRuns(ids)).map((r) => [r._id, r]));
  expect(runs.get(ids[3]!)).toMatchObject({ state: 'claimed', claimed_by: 'b' });
  expect(runs.get(ids[7]!)).toMatchObject(failed);
  expect(runs.get(ids[8]!)).toMatchObject({ ...published, claimed_by: 'a' });
  // 12 failed (7, 107, ..., 1107), 2 taken over, the rest published.
  expect([...runs.values()].filter((r) => r.state === 'failed')).toHaveLength(12);
  expect([...runs.values()].filter((r) => r.state === 'published')).toHaveLength(1_205 - 2 - 12);
});
