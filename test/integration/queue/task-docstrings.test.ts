/**
 * Task descriptions in the API's task list come only from what workers send: the docstring
 * (`__doc__`), which Celery 5.2 sends and Celery 5.7 refuses to, or a `description` attribute,
 * which both send. One stock Python worker of each version runs the interop tasks on a queue of
 * its own; the API lists them through its real control client.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApp, type TestApp } from '../../support/app.js';
import { repoRoot, unique } from '../worker/support.js';
import { celeryDir, celeryEnv } from '../../support/celery-env.js';
import { until } from '../../support/until.js';

const STACKS = [
  { name: 'celery 5.2.6', venv: join(repoRoot, '.venv'), sendsDocstrings: true },
  { name: 'newest celery', venv: join(repoRoot, '.venv-celery-latest'), sendsDocstrings: false },
] as const;

let app: TestApp;
let token: string;
const workers: ChildProcess[] = [];

function startPythonWorker(venv: string, queue: string, node: string): ChildProcess {
  const child = spawn(
    join(venv, 'bin/celery'),
    ['-A', 'interop_app', 'worker', '-P', 'solo', '-Q', queue, '-n', node, '--without-mingle', '--without-gossip', '-l', 'WARNING'],
    {
      cwd: celeryDir,
      env: celeryEnv({ venv, queue, resultDatabase: app.ctx.settings.serviceDatabase }),
      stdio: 'ignore',
    },
  );
  workers.push(child);
  return child;
}

beforeAll(async () => {
  app = await startTestApp({ TASK_LIST_CACHE_S: '0', TASK_LIST_REPLY_TIMEOUT_MS: '2000' });
  await app.users.createUser({ username: 'root', password: 'pw-superuser-1', isSuperuser: true });
  token = await app.users.tokenFor('root');
}, 60_000);

afterAll(async () => {
  for (const child of workers) child.kill('SIGKILL');
  await app?.close();
});

describe('task descriptions from stock Celery workers', () => {
  it.each(STACKS)(
    '$name: the docstring when the worker sends it, else the description attribute, never a guess',
    async ({ venv, sendsDocstrings }) => {
      const queue = unique('py-doc');
      const node = `${unique('py-doc')}@test`;
      const worker = startPythonWorker(venv, queue, node);
      try {
        await expectDescriptions(queue, node, sendsDocstrings);
      } finally {
        // Stopped before the next version's worker starts: the list merges what every worker sends.
        const exited = new Promise((resolve) => worker.once('exit', resolve));
        worker.kill('SIGKILL');
        await exited;
      }
    },
    90_000,
  );
});

async function expectDescriptions(queue: string, node: string, sendsDocstrings: boolean): Promise<void> {
  const tasks = await until(
    async () => {
      const list = await call(app.url, 'GET', `/api/queue/?page_size=0`, { token });
      const found = (list.json.results as { name: string; docstring: string | null; queues: string[] }[]).filter((t) =>
        t.queues.includes(queue),
      );
      return found.length >= 2 ? new Map(found.map((t) => [t.name, t.docstring])) : undefined;
    },
    60_000,
    `the ${node} worker's tasks in the list`,
  );
  expect(tasks.get('interop.nodoc')).toBe('Described by its description attribute.');
  expect(tasks.get('interop.add')).toBe(sendsDocstrings ? 'Add two numbers.' : null);
}
