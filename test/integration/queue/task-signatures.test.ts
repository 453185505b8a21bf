/**
 * Task docs and signatures in the API's task list (`cybercom_task_info`), through the real HTTP
 * server and control client: stock Python workers of Celery 5.2.6 and of the newest Celery, each
 * with the cybercom.celery extension loaded by one line in the app and without it, and the
 * TypeScript worker. One Python worker at a time runs the interop tasks on a queue of its own.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApp, type TestApp } from '../../support/app.js';
import { repoRoot, unique } from '../worker/support.js';
import { celeryDir, celeryEnv } from '../../support/celery-env.js';
import type { Worker } from '../../../src/worker/worker.js';
import { until } from '../../support/until.js';
import { startWorker } from './support.js';

const STACKS = [
  { name: 'celery 5.2.6', venv: join(repoRoot, '.venv'), sendsDocstrings: true },
  { name: 'newest celery', venv: join(repoRoot, '.venv-celery-latest'), sendsDocstrings: false },
] as const;

interface ListedTask {
  name: string;
  docstring: string | null;
  signature: unknown;
  queues: string[];
}

let app: TestApp;
let token: string;
let tsWorker: Worker | undefined;
const children: ChildProcess[] = [];

beforeAll(async () => {
  // No cache: every list request asks the workers, as a refresh would.
  app = await startTestApp({ TASK_LIST_CACHE_S: '0', TASK_LIST_REPLY_TIMEOUT_MS: '2000' });
  await app.users.createUser({ username: 'root', password: 'pw-superuser-1', isSuperuser: true });
  token = await app.users.tokenFor('root');
}, 60_000);

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await tsWorker?.close(1_000);
  await app?.close();
});

/** A Python worker on its own queue; `log()` is what it wrote so far. */
function startPythonWorker(venv: string, withExtension: boolean): { child: ChildProcess; queue: string; node: string; log: () => string } {
  const queue = unique('py-sig');
  const node = `${unique('py-sig')}@test`;
  let log = '';
  const child = spawn(
    join(venv, 'bin/celery'),
    ['-A', 'interop_app', 'worker', '-P', 'solo', '-Q', queue, '-n', node, '--without-mingle', '--without-gossip', '-l', 'WARNING'],
    {
      cwd: celeryDir,
      env: celeryEnv({ venv, queue, resultDatabase: app.ctx.settings.serviceDatabase, cybercomExtension: withExtension }),
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  child.stdout?.on('data', (chunk: Buffer) => (log += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (log += chunk.toString()));
  children.push(child);
  return { child, queue, node, log: () => log };
}

/** Stopped before the next worker starts: the list merges what every worker sends. */
async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

async function listed(): Promise<ListedTask[]> {
  const res = await call(app.url, 'GET', '/api/queue/?page_size=0', { token });
  expect(res.status, res.text).toBe(200);
  return res.json.results as ListedTask[];
}

/**
 * The list's entries for `queue`, once at least `count` are there (and, `described`, all with a
 * signature: every list request asks the workers again, and under load a reply may miss the timeout).
 */
async function tasksOn(queue: string, count: number, log: () => string, described = false): Promise<Map<string, ListedTask>> {
  return until(
    async () => {
      const found = (await listed()).filter((t) => t.queues.includes(queue));
      if (described && found.some((t) => t.signature === null)) return undefined;
      return found.length >= count ? new Map(found.map((t) => [t.name, t])) : undefined;
    },
    60_000,
    `the tasks on ${queue} in the list\n${log()}`,
  );
}

const positional = (name: string) => ({ name, kind: 'positional_or_keyword' });

describe.each(STACKS)('$name worker', ({ venv, sendsDocstrings }) => {
  it('with the extension: every task’s docstring and signature', async () => {
    const worker = startPythonWorker(venv, true);
    try {
      const tasks = await tasksOn(worker.queue, 6, worker.log, true);
      expect(tasks.get('interop.add')).toMatchObject({
        docstring: 'Add two numbers.',
        signature: { text: '(x, y)', parameters: [positional('x'), positional('y')] },
      });
      // registered's description still comes first; the extension adds the signature.
      expect(tasks.get('interop.nodoc')).toMatchObject({
        docstring: 'Described by its description attribute.',
        signature: { text: '()', parameters: [] },
      });
      // Bound (self left out), annotations, JSON defaults and a default only repr() can show.
      const scale = tasks.get('interop.scale');
      expect(scale?.docstring).toMatch(/^Multiply each value by factor\.\n\n\s*Returns the label with the scaled values\.$/);
      expect(scale?.signature).toEqual({
        text: "(values: list, factor: float = 2.0, *, label='scaled', since=datetime.date(2024, 1, 2))",
        parameters: [
          { name: 'values', kind: 'positional_or_keyword', annotation: 'list' },
          { name: 'factor', kind: 'positional_or_keyword', default: 2, annotation: 'float' },
          { name: 'label', kind: 'keyword_only', default: 'scaled' },
          { name: 'since', kind: 'keyword_only', default: 'datetime.date(2024, 1, 2)', default_is_repr: true },
        ],
      });
      expect(worker.log()).not.toMatch(/pidbox command error/);

      // The run page carries the same signature (every request asks the workers again, so a
      // reply that misses the timeout under load is waited out).
      const page = await until(
        async () => {
          const res = await call(app.url, 'GET', '/api/queue/run/interop.scale/', { token });
          return res.status === 200 && res.json.signature !== null ? res : undefined;
        },
        30_000,
        'the run page with the signature',
      );
      expect(page.json).toMatchObject({ docstring: scale?.docstring, signature: scale?.signature });
      const html = await until(
        async () => {
          const res = await call(app.url, 'GET', '/api/queue/run/interop.scale/', { token, accept: 'text/html' });
          return res.status === 200 && res.text.includes('data-signature') ? res : undefined;
        },
        30_000,
        'the run page form with the signature',
      );
      expect(html.status).toBe(200);
      expect(html.text).toContain('<p class="doc">Multiply each value by factor.');
      expect(html.text.match(/data-param-name="[^"]*"/g)).toEqual([
        'data-param-name="values"',
        'data-param-name="factor"',
        'data-param-name="label"',
        'data-param-name="since"',
      ]);
      expect(html.text).toMatch(/data-param-name="factor" data-param-kind="positional_or_keyword" value="2"/);
    } finally {
      await stop(worker.child);
    }
  }, 90_000);

  it('without the extension: the list as before, no signatures, and the refusal asked for once', async () => {
    const worker = startPythonWorker(venv, false);
    try {
      const tasks = await tasksOn(worker.queue, 5, worker.log);
      expect(tasks.get('interop.add')).toMatchObject({ docstring: sendsDocstrings ? 'Add two numbers.' : null, signature: null });
      expect(tasks.get('interop.nodoc')).toMatchObject({ docstring: 'Described by its description attribute.', signature: null });
      expect(tasks.has('interop.scale')).toBe(false);
      // Kombu logs an unknown command as an error in the worker; once it has refused, it is not asked again soon.
      await until(
        async () => /pidbox command error: KeyError\('cybercom_task_info'\)/.test(worker.log()),
        10_000,
        'the refusal in the worker log',
      );
      // One more round notes a refusal that came after the previous round's reply timeout.
      await listed();
      const settled = worker.log().match(/pidbox command error/g)?.length ?? 0;
      for (let i = 0; i < 3; i++) expect((await listed()).filter((t) => t.queues.includes(worker.queue))).toHaveLength(5);
      expect(worker.log().match(/pidbox command error/g)).toHaveLength(settled);
    } finally {
      await stop(worker.child);
    }
  }, 90_000);
});

describe('TypeScript worker', () => {
  it('answers the signatures its tasks declare', async () => {
    const started = await startWorker(app.ctx.settings.serviceDatabase);
    tsWorker = started.worker;
    const tasks = await tasksOn(started.queue, 6, () => '', true);
    expect(tasks.get('tasks.add')).toMatchObject({
      docstring: 'Add two numbers.',
      signature: {
        text: '(x: number, y: number, /)',
        parameters: [
          { name: 'x', kind: 'positional_only', annotation: 'number' },
          { name: 'y', kind: 'positional_only', annotation: 'number' },
        ],
      },
    });
    expect(tasks.get('tasks.fail')?.signature).toEqual({
      text: '(message: string = "failed on purpose", /)',
      parameters: [{ name: 'message', kind: 'positional_only', default: 'failed on purpose', annotation: 'string' }],
    });
    expect(tasks.get('tasks.write_record')?.signature).toMatchObject({
      text: '(*, database: string, collection: string, record: object)',
    });
    expect(tasks.get('tasks.noop')?.signature).toEqual({ text: '()', parameters: [] });
  }, 60_000);
});
