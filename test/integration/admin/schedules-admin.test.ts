/**
 * Schedules in the administration site: the read-only Schedules resource, and the Operations
 * page's schedules (counts, the next to fire, the failing ones with the reason), each reader
 * seeing the schedules the API would show them (task admins everyone's, other staff their own).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { call, startTestApp, type TestApp } from '../../support/app.js';
import { closeAndDrop } from '../auth/helpers.js';
import { ADMIN, ROOT, adminApiGet, adminApiPost, adminBrowser, ensureRoot, type Browser } from './support.js';

let app: TestApp;
let root: Browser;
let staffer: Browser;
let scheduleId: string;

beforeAll(async () => {
  app = await startTestApp({ LOGIN_MAX_FAILURES: '1000', SCHEDULER_ENABLED: 'false' });
  await ensureRoot(app);
  await app.users.createUser({ username: 'staffer', password: 'staff-pass-123', isStaff: true });
  root = await adminBrowser(app, ROOT.username, ROOT.password);
  staffer = await adminBrowser(app, 'staffer', 'staff-pass-123');
  const made = await call(app.url, 'POST', '/api/queue/schedules/', {
    token: await app.users.tokenFor(ROOT.username),
    body: { name: 'nightly-summary', task: 'tasks.add', args: [1, 2], crontab: '0 2 * * *', timezone: 'America/Chicago' },
  });
  expect(made.status, made.text).toBe(201);
  scheduleId = made.json.id;
  // A fire refused because its owner lost a right, as the scheduler records it.
  await app.ctx.serviceDb
    .collection('schedules')
    .updateOne(
      { _id: scheduleId as never },
      { $set: { last_outcome: 'refused', last_reason: 'the owner may no longer run the task', failure_streak: 3 } },
    );
});

afterAll(async () => {
  await closeAndDrop(app);
});

it('lists schedules read-only, with their timing in words', async () => {
  const list = await adminApiGet(root, '/resources/Schedule/actions/list');
  expect(list.status, list.text).toBe(200);
  const row = list.json.records.find((r: { id: string }) => r.id === scheduleId);
  expect(row.params).toMatchObject({
    name: 'nightly-summary',
    task: 'tasks.add',
    timing: 'cron 0 2 * * * (America/Chicago)',
    failure_streak: 3,
  });
  const del = await adminApiPost(root, `/resources/Schedule/records/${scheduleId}/delete`, {});
  expect(del.json.notice.type).toBe('error');
  expect(await app.ctx.serviceDb.collection('schedules').countDocuments({ _id: scheduleId as never })).toBe(1);
});

it('shows the next fires and the failing schedules on the Operations page, to whoever may see them', async () => {
  const data = await root.get(`${ADMIN}/operations/data`);
  expect(data.status, data.text).toBe(200);
  expect(data.json.schedules).toMatchObject({ active: 1, paused: 0 });
  expect(data.json.schedules.next[0]).toMatchObject({ id: scheduleId, name: 'nightly-summary', owner: ROOT.username });
  expect(new Date(data.json.schedules.next[0].nextFireAt).toLocaleTimeString('en-US', { timeZone: 'America/Chicago', hour12: false })).toBe(
    '02:00:00',
  );
  expect(data.json.schedules.failing).toEqual([
    expect.objectContaining({ id: scheduleId, failureStreak: 3, lastReason: 'the owner may no longer run the task' }),
  ]);
  const theirs = await staffer.get(`${ADMIN}/operations/data`);
  expect(theirs.json.schedules).toEqual({ active: 0, paused: 0, next: [], failing: [] });
});

it('pauses a schedule with a note and resumes it, through the schedules service; staff who may not manage it cannot', async () => {
  const refused = await adminApiPost(staffer, `/resources/Schedule/records/${scheduleId}/pause`, { note: 'not mine' });
  expect(refused.json.notice?.type ?? 'error').toBe('error');
  expect(await app.ctx.serviceDb.collection('schedules').findOne({ _id: scheduleId as never })).toMatchObject({ paused: false });

  const paused = await adminApiPost(root, `/resources/Schedule/records/${scheduleId}/pause`, { note: 'sensor maintenance' });
  expect(paused.status, paused.text).toBe(200);
  expect(paused.json.notice).toMatchObject({ type: 'success' });
  // As the service pauses: no due time, so the scheduler passes it by; the next fire kept.
  expect(await app.ctx.serviceDb.collection('schedules').findOne({ _id: scheduleId as never })).toMatchObject({
    paused: true,
    note: 'sensor maintenance',
    due_at: null,
  });
  const shown = await adminApiGet(root, `/resources/Schedule/records/${scheduleId}/show`);
  expect(shown.json.record.params).toMatchObject({ paused: true, note: 'sensor maintenance' });

  const resumed = await adminApiPost(root, `/resources/Schedule/records/${scheduleId}/resume`, {});
  expect(resumed.json.notice).toMatchObject({ type: 'success' });
  const after = await app.ctx.serviceDb.collection('schedules').findOne({ _id: scheduleId as never });
  expect(after).toMatchObject({ paused: false, note: '' });
  expect(after?.due_at).toBeInstanceOf(Date);
});

it("lists for other staff only their own schedules, as the schedules' API does", async () => {
  const theirs = await adminApiGet(staffer, '/resources/Schedule/actions/list');
  expect(theirs.status, theirs.text).toBe(200);
  expect(theirs.json.records).toEqual([]);
  const filtered = await adminApiGet(root, '/resources/Schedule/actions/list?filters.task=ADD');
  expect(filtered.json.records.map((r: { id: string }) => r.id)).toEqual([scheduleId]);
});
