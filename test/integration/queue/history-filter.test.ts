/**
 * `GET /api/queue/usertasks/?status=` filters, counts and pages in the database, through the real
 * HTTP server: exact counts and pages per state, results written straight into the results
 * collection (as a stock Python worker writes them, without touching the log), entries of older
 * versions without a recorded state, and states that change between two reads. The database is
 * asked about the user's unfinished tasks only, never about every entry of the history.
 */
import type { Document, Filter } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { call, startTestApp, type TestApp } from '../../support/app.js';
import type { QueueService } from '../../../src/queue/api/queue-service.js';
import { TaskLog, type TaskLogEntry } from '../../../src/queue/api/task-log.js';

const ENTRIES = 1_500;
let app: TestApp;
let queue: QueueService;
let token: string;
/** task id → its state, as the test wrote it; index = age (0 newest). */
const expected: { id: string; state: string }[] = [];

/** The state of entry i: mostly SUCCESS, some FAILURE, a few running and queued. */
function stateOf(i: number): string {
  if (i % 50 === 7) return 'STARTED';
  if (i % 50 === 13) return 'PENDING';
  if (i % 10 === 3) return 'FAILURE';
  if (i === 42) return 'REVOKED';
  return 'SUCCESS';
}

/** A result document as Celery 5.2's MongoDB backend writes it. */
const pythonResult = (id: string, status: string) => ({
  _id: id,
  status,
  result: status === 'FAILURE' ? JSON.stringify({ exc_type: 'ValueError', exc_message: ['x'], exc_module: 'builtins' }) : 'null',
  traceback: null,
  children: [],
  date_done: status === 'STARTED' ? null : '2024-06-19T19:23:24.611000',
});

const history = async (query: string) => {
  const res = await call(app.url, 'GET', `/api/queue/usertasks/?${query}`, { token });
  expect(res.status, res.text).toBe(200);
  return res.json as { count: number; meta: { page: number; pages: number }; results: { task_id: string; status: string }[] };
};

beforeAll(async () => {
  app = await startTestApp();
  queue = app.ctx.queue as QueueService;
  const owner = await app.users.createUser({ username: 'owner', password: 'pw-owner-1234' });
  const someone = await app.users.createUser({ username: 'someone', password: 'pw-someone-12' });
  token = await app.users.tokenFor('owner');
  const now = Date.now();
  const log: TaskLogEntry[] = [];
  const results: Document[] = [];
  for (let i = 0; i < ENTRIES; i++) {
    const id = `h-${String(i).padStart(5, '0')}`;
    const state = stateOf(i);
    expected.push({ id, state });
    const entry: TaskLogEntry = {
      _id: id,
      task_id: id,
      user_id: owner.id,
      user: 'owner',
      task_name: i % 2 ? 'tasks.add' : 'tasks.fail',
      args: [],
      kwargs: {},
      queue: 'celery',
      tags: [],
      timestamp: new Date(now - i * 1000),
    };
    // A third of the entries come from a version that kept no state in the log.
    if (i % 3 !== 0) entry.state = 'PENDING';
    log.push(entry);
    if (state !== 'PENDING') results.push(pythonResult(id, state));
  }
  // Another user's entries in the same states must never count.
  for (let i = 0; i < 100; i++)
    log.push({
      _id: `x-${i}`,
      task_id: `x-${i}`,
      user_id: someone.id,
      user: 'someone',
      task_name: 'tasks.add',
      args: [],
      kwargs: {},
      queue: 'celery',
      tags: [],
      timestamp: new Date(now),
      state: 'PENDING',
    });
  await queue.log.collection.insertMany(log);
  await queue.results.collection.insertMany(results as never[]);
  // What a service started after an upgrade does to the older entries.
  await new TaskLog(app.ctx.serviceDb).ensureIndexes();
}, 120_000);

afterAll(async () => {
  vi.restoreAllMocks();
  await app?.close();
});

describe('history filtered by state', () => {
  it.each(['SUCCESS', 'FAILURE', 'STARTED', 'PENDING', 'REVOKED', 'RETRY'])('counts and pages %s exactly, newest first', async (state) => {
    const matching = expected.filter((e) => e.state === state).map((e) => e.id);
    const first = await history(`status=${state.toLowerCase()}&page_size=20`);
    expect(first.count).toBe(matching.length);
    expect(first.meta.pages).toBe(Math.max(1, Math.ceil(matching.length / 20)));
    expect(first.results.map((r) => r.task_id)).toEqual(matching.slice(0, 20));
    expect(first.results.every((r) => r.status === state)).toBe(true);
    if (matching.length > 40) {
      const third = await history(`status=${state}&page_size=20&page=3`);
      expect(third.results.map((r) => r.task_id)).toEqual(matching.slice(40, 60));
    }
    // A page past the last one answers the last page, as everywhere else.
    const past = await history(`status=${state}&page_size=20&page=100000`);
    expect(past.results.map((r) => r.task_id)).toEqual(matching.slice(Math.max(0, (first.meta.pages - 1) * 20), first.meta.pages * 20));
  });

  it('combines the state with the task-name filter', async () => {
    const matching = expected.filter((e, i) => e.state === 'FAILURE' && i % 2 === 1).map((e) => e.id);
    const res = await history('status=FAILURE&taskname=tasks.add&page_size=0');
    expect(res.count).toBe(matching.length);
    expect(res.results.map((r) => r.task_id)).toEqual(matching);
  });

  it('sees states that change after an earlier read (a worker finishing, a queued task starting)', async () => {
    const running = expected.find((e) => e.state === 'STARTED')!;
    const queued = expected.find((e) => e.state === 'PENDING')!;
    const before = (await history('status=STARTED&page_size=0')).count;
    await queue.results.collection.replaceOne({ _id: running.id }, pythonResult(running.id, 'SUCCESS') as never);
    await queue.results.collection.insertOne(pythonResult(queued.id, 'STARTED') as never);
    const started = await history('status=STARTED&page_size=0');
    expect(started.count).toBe(before);
    expect(started.results.map((r) => r.task_id)).toContain(queued.id);
    expect(started.results.map((r) => r.task_id)).not.toContain(running.id);
    expect((await history('status=SUCCESS&page_size=0')).results.map((r) => r.task_id)).toContain(running.id);
    running.state = 'SUCCESS';
    queued.state = 'STARTED';
  });

  it('counts a task in a custom state of its own (update_state) as STARTED', async () => {
    const queued = expected.find((e) => e.state === 'PENDING')!;
    await queue.results.collection.insertOne(pythonResult(queued.id, 'PROGRESS') as never);
    const started = await history('status=STARTED&page_size=0');
    expect(started.results.map((r) => r.task_id)).toContain(queued.id);
    expect(started.count).toBe(expected.filter((e) => e.state === 'STARTED').length + 1);
    queued.state = 'STARTED';
  });

  it('asks the database about unfinished tasks only, never about every entry', async () => {
    const logFind = vi.spyOn(queue.log.collection, 'find');
    const resultFind = vi.spyOn(queue.results.collection, 'find');
    await history('status=FAILURE&page_size=20');
    const unfinished = expected.filter((e) => !['SUCCESS', 'FAILURE', 'REVOKED'].includes(e.state)).length;
    // Result documents are looked up for the unfinished entries alone.
    const looked = resultFind.mock.calls.reduce(
      (n, [filter]) => n + (((filter as Filter<Document>)._id as { $in?: unknown[] })?.$in?.length ?? 0),
      0,
    );
    expect(looked).toBeLessThanOrEqual(unfinished);
    // The log is read as one page (with the count beside it), plus the unfinished entries.
    for (const [filter] of logFind.mock.calls) {
      const f = filter as Filter<TaskLogEntry>;
      expect(f.state, JSON.stringify(f)).toBeDefined();
    }
    logFind.mockRestore();
    resultFind.mockRestore();
  });
});

describe('a long history spread over years', () => {
  // Few recent entries and most of them years old: pages are found in windows of recent entries
  // of growing length (the last minute, 16 minutes, 4.3 hours, ...), then in the whole history.
  const USER = 'archivist';
  const SPREAD: [count: number, fromMs: number, toMs: number][] = [
    [150, 0, 30_000],
    [300, 5 * 60_000, 15 * 60_000],
    [300, 3600_000, 3 * 3600_000],
    [750, 5 * 86_400_000, 20 * 86_400_000],
    [1_500, 3 * 365 * 86_400_000, 5 * 365 * 86_400_000],
  ];
  /** Every id, newest first (ties in time by id, descending). */
  let order: string[] = [];
  const ids = (rows: { _id?: string; task_id?: string }[]) => rows.map((r) => r._id ?? r.task_id);

  beforeAll(async () => {
    const archivistId = (await app.users.createUser({ username: USER, password: 'pw-archivist-1' })).id;
    userId = archivistId;
    const now = Date.now();
    const entries: TaskLogEntry[] = [];
    let n = 0;
    for (const [count, fromMs, toMs] of SPREAD) {
      for (let i = 0; i < count; i++, n++) {
        // Every third entry shares its millisecond with the one before: ties are ordered by id.
        const age = fromMs + Math.floor(((i - (i % 3 === 2 ? 1 : 0)) * (toMs - fromMs)) / count);
        const id = `a-${String((n * 7919) % 10_000).padStart(4, '0')}-${n}`;
        entries.push({
          _id: id,
          task_id: id,
          user_id: archivistId,
          user: USER,
          task_name: 'tasks.add',
          args: [],
          kwargs: {},
          queue: 'celery',
          tags: [],
          timestamp: new Date(now - age),
          state: 'SUCCESS',
        });
      }
    }
    await queue.log.collection.insertMany(entries);
    order = [...entries].sort((a, b) => b.timestamp.getTime() - a.timestamp.getTime() || (a._id < b._id ? 1 : -1)).map((e) => e._id);
    const token = await app.users.tokenFor(USER);
    archivist = async (query) => {
      const res = await call(app.url, 'GET', `/api/queue/usertasks/?${query}`, { token });
      expect(res.status, res.text).toBe(200);
      return res.json;
    };
  }, 60_000);
  let archivist: (query: string) => Promise<{ count: number; results: { task_id: string }[] }>;
  let userId: string;

  it.each([1, 11, 26, 37, 38, 100, 150])('answers page %i (of 20) exactly as a sort of every entry would', async (page) => {
    for (const status of ['', 'status=SUCCESS&']) {
      const res = await archivist(`${status}page_size=20&page=${page}`);
      expect(res.count).toBe(order.length);
      expect(ids(res.results)).toEqual(order.slice((page - 1) * 20, page * 20));
    }
  });

  it('answers a page that begins in one window and ends in the next', async () => {
    // Entries 147-153: the last minute holds the first 150.
    const res = await archivist('page_size=7&page=22');
    expect(ids(res.results)).toEqual(order.slice(147, 154));
  });

  it('without the count beside it, looks through every window and then the whole history', async () => {
    const log = queue.log;
    for (const [skip, limit] of [
      [0, 20],
      [440, 20],
      [749, 3],
      [1_490, 20],
      [2_990, 20],
      [3_000, 20],
    ] as const) {
      expect(ids(await log.page({ userId }, skip, limit)), `skip ${skip}`).toEqual(order.slice(skip, skip + limit));
      expect(ids(await log.page({ userId }, skip, limit, 'SUCCESS')), `skip ${skip}, SUCCESS`).toEqual(order.slice(skip, skip + limit));
    }
  });
});
