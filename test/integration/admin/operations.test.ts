/**
 * The Operations page's data and actions (/api/admin/operations/*) through the real HTTP server,
 * with a real TypeScript worker on the real TLS broker: who may read them, the worker and its
 * queue, workers going offline after missed heartbeats, outcome counts per minute, the latest
 * failures filtered by who may read them, and revoke/terminate (CSRF-checked, permission-checked).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApp, type TestApp } from '../../support/app.js';
import type { Worker } from '../../../src/worker/worker.js';
import { EVENT_EXCHANGE } from '../../../src/queue/protocol/entities.js';
import { until } from '../../support/until.js';
import { startWorker } from '../queue/support.js';
import { closeAndDrop } from '../auth/helpers.js';
import { Browser, ROOT, ensureRoot, loggedIn } from './support.js';

const DATA = '/api/admin/operations/data';
const REVOKE = '/api/admin/operations/revoke';

let app: TestApp;
let worker: Worker;
let queue: string;
let nodeName: string;
let root: Browser;
let staffer: Browser;
const tokens: Record<string, string> = {};

interface Failure {
  taskId: string;
  name: string;
  user: string | null;
  args: unknown;
  kwargs: unknown;
  error: { type: string; message: string } | null;
  traceback: string | null;
}

const submit = (as: string, task: string, args: unknown[], kwargs: Record<string, unknown> = {}, wait?: number) =>
  call(app.url, 'POST', `/api/queue/run/${task}/${wait === undefined ? '' : `?wait=${wait}`}`, {
    token: tokens[as],
    body: { function: task, queue, args, kwargs, tags: [] },
  });

/** A logged-in admin browser whose XSRF-TOKEN cookie is set (any admin GET sets it). */
async function adminSession(username: string, password: string): Promise<Browser> {
  const b = await loggedIn(app, username, password);
  expect((await b.get(DATA)).status).toBe(200);
  expect(b.cookies.get('XSRF-TOKEN')).toBeDefined();
  return b;
}

const revoke = (b: Browser, body: unknown, headers?: Record<string, string>) =>
  b.postJson(REVOKE, body, headers ?? { 'X-XSRF-TOKEN': b.cookies.get('XSRF-TOKEN') ?? '', origin: b.baseUrl });

beforeAll(async () => {
  app = await startTestApp({ LOGIN_MAX_FAILURES: '1000', TASK_WAIT_MAX_S: '30' });
  ({ worker, queue, nodeName } = await startWorker(app.ctx.settings.serviceDatabase));
  await ensureRoot(app);
  const taskRights = ['cybercom_queue.task.tasks.fail', 'cybercom_queue.task.tasks.sleep', 'cybercom_queue.task.tasks.add'];
  await app.users.createUser({ username: 'staffer', password: 'staff-pass-123', isStaff: true, permissions: taskRights });
  await app.users.createUser({ username: 'researcher', password: 'research-pass-123', permissions: taskRights });
  for (const u of ['root', 'staffer', 'researcher']) tokens[u] = await app.users.tokenFor(u);
  root = await adminSession(ROOT.username, ROOT.password);
  staffer = await adminSession('staffer', 'staff-pass-123');
  await until(
    async () => {
      const res = await call(app.url, 'GET', '/api/queue/?refresh=true&page_size=0', { token: tokens.root });
      return res.json?.queues?.includes(queue) === true;
    },
    20_000,
    'the worker to be listed',
  );
});

afterAll(async () => {
  await worker?.close();
  await closeAndDrop(app);
});

describe('who may read the Operations data', () => {
  it('refuses anonymous visitors, accounts without staff status and API tokens', async () => {
    const anonymous = await new Browser(app.url).get(DATA);
    expect(anonymous.status).toBe(302);
    expect(anonymous.headers.get('location')).toBe(`/api/auth/login/?next=${encodeURIComponent(DATA)}`);
    const researcher = await loggedIn(app, 'researcher', 'research-pass-123');
    const refused = await researcher.get(DATA);
    expect(refused.status).toBe(403);
    expect(refused.text).not.toContain('"workers"');
    const token = await call(app.url, 'GET', DATA, { token: tokens.root });
    expect(token.status).toBe(403);
    expect(token.json.error.code).toBe('admin_needs_session');
    // The revoke action is refused the same way, before anything is revoked.
    expect((await researcher.postJson(REVOKE, { task_id: randomUUID() }, { origin: app.url })).status).toBe(403);
  });

  it('answers staff with workers, queues, the last hour per minute and the rule for offline workers', async () => {
    const res = await staffer.get(DATA);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.json.minutes).toHaveLength(60);
    expect(res.json.offlineRule).toContain('twice its heartbeat interval');
    expect(res.json).toHaveProperty('workers');
    expect(res.json).toHaveProperty('queues');
    expect(res.json).toHaveProperty('failures');
  });

  it('refuses unknown query parameters with a 400', async () => {
    const res = await staffer.get(`${DATA}?verbose=1`);
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe('unknown_parameter');
  });
});

describe('workers and queues', () => {
  it('lists the running worker with its queue, pool size and heartbeat, and the queue with its consumer', async () => {
    const row = await until(
      async () => {
        const res = await root.get(DATA);
        const w = res.json.workers.find((x: { node: string }) => x.node === nodeName);
        return w?.lastHeartbeat !== null && w?.concurrency !== null && w?.queues.length > 0 ? w : undefined;
      },
      20_000,
      'the worker with a heartbeat and its control answers',
    );
    expect(row).toMatchObject({ node: nodeName, online: true, queues: [queue], concurrency: 2 });
    expect(row.load).toHaveLength(3);
    expect(Date.now() - Date.parse(row.lastHeartbeat)).toBeLessThan(10_000);
    const res = await root.get(DATA);
    expect(res.json.queues.find((q: { name: string }) => q.name === queue)).toMatchObject({ name: queue, messages: 0, consumers: 1 });
  });

  it('shows a worker offline once it misses its heartbeats (twice its interval)', async () => {
    const node = `ghost-${randomUUID().slice(0, 8)}@localhost`;
    const channel = await app.ctx.queue!.session.require().createChannel();
    try {
      const heartbeat = () =>
        channel.publish(
          EVENT_EXCHANGE,
          'worker.heartbeat',
          Buffer.from(
            JSON.stringify({
              type: 'worker-heartbeat',
              hostname: node,
              freq: 0.5,
              active: 0,
              processed: 7,
              loadavg: [0.1, 0.2, 0.3],
              timestamp: Date.now() / 1000,
            }),
          ),
          { contentType: 'application/json' },
        );
      const online = await until(
        async () => {
          heartbeat();
          const w = (await root.get(DATA)).json.workers.find((x: { node: string }) => x.node === node);
          return w?.online === true ? w : undefined;
        },
        10_000,
        'the heartbeating worker to be listed online',
      );
      expect(online).toMatchObject({ processed: 7, load: [0.1, 0.2, 0.3] });
      // No more heartbeats: offline one second (2 × 0.5 s) after the last one.
      const offline = await until(
        async () => {
          const w = (await root.get(DATA)).json.workers.find((x: { node: string }) => x.node === node);
          return w?.online === false ? w : undefined;
        },
        10_000,
        'the silent worker to be listed offline',
      );
      expect(offline).toMatchObject({ node, online: false, load: null, active: 0 });
    } finally {
      await channel.close();
    }
  });
});

describe('failures and outcomes', () => {
  it('counts outcomes per minute and lists failures with traceback and arguments only to who may read them', async () => {
    const mine = await submit('staffer', 'tasks.fail', ['staffer broke it'], {}, 20);
    const roots = await submit('root', 'tasks.fail', ['root broke it'], {}, 20);
    const outsider = await submit('researcher', 'tasks.fail', ['researcher broke it'], {}, 20);
    expect(await submit('root', 'tasks.add', [1, 2], {}, 20).then((r) => r.json.status)).toBe('SUCCESS');
    for (const r of [mine, roots, outsider]) expect(r.json.status).toBe('FAILURE');

    const forRoot = await until(
      async () => {
        const res = await root.get(DATA);
        const failed = res.json.minutes.reduce((n: number, m: { failed: number }) => n + m.failed, 0);
        const succeeded = res.json.minutes.reduce((n: number, m: { succeeded: number }) => n + m.succeeded, 0);
        return failed >= 3 && succeeded >= 1 ? res.json : undefined;
      },
      20_000,
      'the outcomes to be counted',
    );
    const ids = forRoot.failures.map((f: Failure) => f.taskId);
    expect(ids).toEqual(expect.arrayContaining([mine.json.task_id, roots.json.task_id, outsider.json.task_id]));
    const rootFailure = forRoot.failures.find((f: Failure) => f.taskId === roots.json.task_id) as Failure;
    expect(rootFailure).toMatchObject({
      name: 'tasks.fail',
      user: 'root',
      args: ['root broke it'],
      kwargs: {},
      error: { type: 'Exception', message: 'root broke it' },
    });
    expect(rootFailure.traceback).toContain('root broke it');
    const worker = forRoot.workers.find((w: { node: string }) => w.node === nodeName);
    expect(worker.failed).toBeGreaterThanOrEqual(3);
    expect(worker.succeeded).toBeGreaterThanOrEqual(1);
    // Four submissions through this API within the last minute, each delivered to the worker.
    const rates = forRoot.queues.find((q: { name: string }) => q.name === queue);
    expect(rates.publishRate).toBeGreaterThanOrEqual(4 / 60);
    expect(rates.deliverRate).toBeGreaterThanOrEqual(4 / 60);

    // A staff member without task-admin rights sees only the failures of their own tasks.
    const forStaffer = (await staffer.get(DATA)).json;
    expect(forStaffer.failures.map((f: Failure) => f.taskId)).toEqual([mine.json.task_id]);
    expect(forStaffer.failures[0].traceback).toContain('staffer broke it');
    expect(JSON.stringify(forStaffer)).not.toContain('root broke it');
  });
});

describe('the chart after a restart', () => {
  it('fills the last hour from the result store when another API process first serves the page', async () => {
    // A second API process on the same database, whose monitor starts only now: the outcomes of
    // the tasks above come from the result documents, not from events it never heard.
    const second = await startTestApp({ SERVICE_DATABASE: app.ctx.settings.serviceDatabase });
    try {
      const b = await loggedIn(second, ROOT.username, ROOT.password);
      const totals = await until(
        async () => {
          const res = await b.get(DATA);
          const failed = res.json.minutes.reduce((n: number, m: { failed: number }) => n + m.failed, 0);
          const succeeded = res.json.minutes.reduce((n: number, m: { succeeded: number }) => n + m.succeeded, 0);
          return failed >= 3 && succeeded >= 1 ? { failed, succeeded } : undefined;
        },
        10_000,
        'the last hour to be read from the result store',
      );
      expect(totals.failed).toBeGreaterThanOrEqual(3);
    } finally {
      await second.close();
    }
  });
});

describe('revoke and terminate', () => {
  it('terminates a running task after the CSRF and permission checks', async () => {
    const submitted = await submit('root', 'tasks.sleep', [60]);
    expect(submitted.status).toBe(202);
    const id = submitted.json.task_id as string;
    const running = await until(
      async () => {
        const res = await root.get(DATA);
        return res.json.running.find((t: { id: string }) => t.id === id);
      },
      20_000,
      'the task to be listed as running',
    );
    expect(running).toMatchObject({ id, name: 'tasks.sleep', worker: nodeName, args: [60], user: 'root' });
    // Another staff member neither sees it nor may revoke it.
    expect((await staffer.get(DATA)).json.running.some((t: { id: string }) => t.id === id)).toBe(false);
    const refused = await revoke(staffer, { task_id: id, terminate: true });
    expect(refused.status).toBe(404);

    // Without the CSRF header, or from another site, nothing happens.
    expect((await revoke(root, { task_id: id, terminate: true }, { origin: app.url })).status).toBe(403);
    expect(
      (
        await revoke(
          root,
          { task_id: id, terminate: true },
          { 'X-XSRF-TOKEN': root.cookies.get('XSRF-TOKEN') ?? '', origin: 'https://evil.example' },
        )
      ).status,
    ).toBe(403);
    expect((await app.ctx.queue!.results.get(id)).status).toBe('STARTED');

    const done = await revoke(root, { task_id: id, terminate: true });
    expect(done.status).toBe(200);
    expect(done.json).toEqual({ task_id: id, terminate: true, status: 'REVOKED' });
    const result = await app.ctx.queue!.results.get(id);
    expect(result.status).toBe('REVOKED');
    await until(
      async () => !(await root.get(DATA)).json.running.some((t: { id: string }) => t.id === id),
      20_000,
      'the task to stop running',
    );
  });

  it('answers bad revoke requests with 4xx', async () => {
    expect((await revoke(root, { task_id: 'no such task' })).status).toBe(404);
    expect((await revoke(root, { task_id: 42 })).json.error.code).toBe('invalid_task_id');
    expect((await revoke(root, { task_id: randomUUID(), terminate: 'yes' })).json.error.code).toBe('invalid_terminate');
    expect((await revoke(root, { task_id: randomUUID(), extra: 1 })).json.error.code).toBe('unknown_field');
    const malformed = await root.request('POST', REVOKE, {
      headers: { 'X-XSRF-TOKEN': root.cookies.get('XSRF-TOKEN') ?? '', origin: root.baseUrl },
      body: '{"task_id":',
    });
    expect(malformed.status).toBe(400);
    expect((await root.get(REVOKE)).status).toBe(405);
  });
});
