/**
 * `serve` with API_PROCESSES=2 and a real TypeScript worker: tasks submitted through the one port
 * land on both API processes, and every poll of the Operations data, whichever process answers
 * it, reports the publish and deliver rates of all of them (each process counts only its own
 * submissions) and the same outcomes per minute.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Worker } from '../../../src/worker/worker.js';
import { startTestApp, type TestApp } from '../../support/app.js';
import { requestOnNewConnection, spawnServe, type ServeProcess } from '../../support/serve-process.js';
import { closeAndDrop } from '../auth/helpers.js';
import { until } from '../../support/until.js';
import { startWorker } from '../queue/support.js';
import { Browser } from './support.js';

const DATA = '/api/admin/operations/data';
const TASKS = 40;
const READS = 12;

interface Answer {
  status: number;
  json: any;
  text: string;
}

/** One request on a connection of its own, so the kernel picks the API process anew each time. */
async function send(url: string, method: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  const { status, text } = await requestOnNewConnection(url, { method, headers, body });
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    // not JSON: the status tells
  }
  return { status, json, text };
}

interface QueueRow {
  name: string;
  publishRate: number;
  deliverRate: number;
}

describe('the Operations data with API_PROCESSES=2', () => {
  let helper: TestApp;
  let worker: Worker;
  let queue: string;
  let serve: ServeProcess;
  let baseUrl = '';
  let token = '';
  let staff: Browser;

  const data = async (): Promise<{ queue: QueueRow | undefined; succeeded: number; workers: string[] }> => {
    const res = await send(`${baseUrl}${DATA}`, 'GET', { cookie: staff.cookieHeader() });
    expect(res.status, res.text).toBe(200);
    const rows = res.json.queues as QueueRow[];
    const minutes = res.json.minutes as { succeeded: number }[];
    return {
      queue: rows.find((q) => q.name === queue),
      succeeded: minutes.reduce((n, m) => n + m.succeeded, 0),
      workers: (res.json.workers as { node: string }[]).map((w) => w.node),
    };
  };

  beforeAll(async () => {
    // Users are made in the spawned serve's service database through an in-process app on it.
    helper = await startTestApp();
    const database = helper.ctx.settings.serviceDatabase;
    await helper.users.createUser({
      username: 'staffer',
      password: 'staff-pass-123',
      isStaff: true,
      permissions: ['cybercom_queue.task.tasks.add'],
    });
    token = await helper.users.tokenFor('staffer');
    ({ worker, queue } = await startWorker(database));
    serve = await spawnServe({ API_PROCESSES: '2', METRICS_ENABLED: 'false', SERVICE_DATABASE: database });
    baseUrl = await serve.listening();
    staff = new Browser(baseUrl);
    await staff.loginJson('staffer', 'staff-pass-123');
  }, 120_000);

  afterAll(async () => {
    await serve?.kill();
    await worker?.close();
    await closeAndDrop(helper);
  });

  it('reports the submissions and deliveries of both processes on every poll', async () => {
    // Opening the page starts the monitors (of every process, as the answering one asks them
    // all); the queue is listed once the workers answered.
    await until(
      async () => {
        const reads = await Promise.all([0, 1, 2, 3].map(() => data()));
        return reads.every((r) => r.queue !== undefined);
      },
      30_000,
      `the queue to be listed by every process; output:\n${serve.output()}`,
    );

    // Several at a time on new connections, so both processes take some.
    const body = JSON.stringify({ function: 'tasks.add', queue, args: [1, 2], kwargs: {}, tags: [] });
    const headers = { authorization: `Token ${token}`, 'content-type': 'application/json' };
    for (let i = 0; i < TASKS; i += 4) {
      const answers = await Promise.all([0, 1, 2, 3].map(() => send(`${baseUrl}/api/queue/run/tasks.add/`, 'POST', headers, body)));
      for (const a of answers) expect(a.status, a.text).toBeLessThan(300);
    }

    // Rates are per second over the last minute: TASKS / 60 in all, whichever process answers.
    // (Each process's own count is about half of it.)
    const published: number[] = [];
    for (let i = 0; i < READS; i++) published.push(((await data()).queue?.publishRate ?? 0) * 60);
    for (const p of published) expect(p, published.join(', ')).toBeCloseTo(TASKS, 6);

    // Deliveries and outcomes come with the worker's events: once all are in, every poll has them all.
    await until(
      async () => {
        const d = await data();
        return Math.abs((d.queue?.deliverRate ?? 0) * 60 - TASKS) < 1e-6 && d.succeeded === TASKS;
      },
      30_000,
      'the deliveries and outcomes of all tasks',
    );
    for (let i = 0; i < READS; i++) {
      const d = await data();
      expect((d.queue?.deliverRate ?? 0) * 60).toBeCloseTo(TASKS, 6);
      expect((d.queue?.publishRate ?? 0) * 60).toBeCloseTo(TASKS, 6);
      expect(d.succeeded).toBe(TASKS);
    }
  }, 180_000);
});
