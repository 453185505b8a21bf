/**
 * The task-queue API through the real HTTP server, with a real TypeScript worker on the real
 * TLS broker: listing, submission (and every documented 4xx), synchronous waits, results,
 * permissions and privacy of runs, revocation, and the caller's history.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApp, type TestApp } from '../../support/app.js';
import type { Worker } from '../../../src/worker/worker.js';
import { until } from '../../support/until.js';
import { startWorker } from './support.js';
import { Browser } from '../auth/helpers.js';

let app: TestApp;
let worker: Worker;
let queue: string;
const tokens: Record<string, string> = {};

const submit = (task: string, body: Record<string, unknown>, opts: { as?: string; wait?: number } = {}) =>
  call(app.url, 'POST', `/api/queue/run/${task}/${opts.wait !== undefined ? `?wait=${opts.wait}` : ''}`, {
    token: tokens[opts.as ?? 'runner'],
    body: { function: task, queue, args: [], kwargs: {}, tags: [], ...body },
  });

beforeAll(async () => {
  app = await startTestApp({ TASK_WAIT_MAX_S: '30' });
  ({ worker, queue } = await startWorker(app.ctx.settings.serviceDatabase));
  await app.users.createUser({
    username: 'runner',
    password: 'pw-runner-123',
    permissions: [
      'cybercom_queue.task.tasks.add',
      'cybercom_queue.task.tasks.fail',
      'cybercom_queue.task.tasks.sleep',
      'cybercom_queue.task.tasks.whoami',
    ],
  });
  await app.users.createUser({ username: 'other', password: 'pw-other-1234', permissions: ['cybercom_queue.task.tasks.add'] });
  await app.users.createUser({ username: 'nobody', password: 'pw-nobody-123' });
  await app.users.createUser({ username: 'taskadmin', password: 'pw-tadmin-123', permissions: ['cybercom_queue.task_admin'] });
  await app.users.createUser({ username: 'root', password: 'pw-superuser-1', isSuperuser: true });
  for (const u of ['runner', 'other', 'nobody', 'taskadmin', 'root']) tokens[u] = await app.users.tokenFor(u);
  // The worker must be visible to remote control before submissions are accepted.
  await until(
    async () => {
      const res = await call(app.url, 'GET', '/api/queue/?refresh=true&page_size=0', { token: tokens.taskadmin });
      return res.json?.queues?.includes(queue) === true;
    },
    20_000,
    'the worker to be listed',
  );
});

afterAll(async () => {
  await worker?.close();
  await app?.close();
});

describe('task list and task pages', () => {
  it('lists live tasks with docstrings, queues and run URLs, and the live queues', async () => {
    const res = await call(app.url, 'GET', '/api/queue/?page_size=0', { token: tokens.runner });
    expect(res.status).toBe(200);
    const add = res.json.results.find((t: { name: string }) => t.name === 'tasks.add');
    expect(add).toMatchObject({ docstring: 'Add two numbers.', url: `${app.url}/api/queue/run/tasks.add/` });
    expect(add.queues).toContain(queue);
    expect(res.json.queues).toContain(queue);
    expect(typeof res.json.count).toBe('number');
    expect((await call(app.url, 'GET', '/api/queue/')).status).toBe(401);
    expect((await call(app.url, 'GET', '/api/queue/?refresh=true', { token: tokens.runner })).status).toBe(403);
  });

  it('describes one task with an example curl line carrying the caller token', async () => {
    const res = await call(app.url, 'GET', '/api/queue/run/tasks.add/', { token: tokens.runner });
    expect(res.status).toBe(200);
    expect(res.json.name).toBe('tasks.add');
    expect(res.json.docstring).toBe('Add two numbers.');
    expect(res.json.example).toContain(`Authorization: Token ${tokens.runner}`);
    expect(res.json.example).toContain(`${app.url}/api/queue/run/tasks.add/`);
    expect((await call(app.url, 'GET', '/api/queue/run/tasks.nothere/', { token: tokens.runner })).status).toBe(404);
  });

  it('shows a placeholder instead of a key to callers that did not send one (keys are stored hashed)', async () => {
    const b = new Browser(app.url);
    await b.loginJson('runner', 'pw-runner-123');
    const res = await b.get('/api/queue/run/tasks.add/');
    expect(res.status, res.text).toBe(200);
    expect(res.json.example).toContain('Authorization: Token <your API token>');
    expect(res.text).not.toContain(tokens.runner);
    // Showing the page neither rotated nor revoked the caller's key.
    expect((await call(app.url, 'GET', '/api/queue/run/tasks.add/', { token: tokens.runner })).status).toBe(200);
  });
});

describe('submission', () => {
  it('answers 202 after the broker confirmed, then the result appears', async () => {
    const res = await submit('tasks.add', { args: [2, 3] });
    expect(res.status).toBe(202);
    expect(res.json).toMatchObject({ status: 'PENDING' });
    expect(res.json.result_url).toBe(`${app.url}/api/queue/task/${res.json.task_id}/`);
    const done = await until(
      async () => {
        const r = await call(app.url, 'GET', `/api/queue/task/${res.json.task_id}/`, { token: tokens.runner });
        return r.json?.status === 'SUCCESS' ? r.json : undefined;
      },
      20_000,
      'the add task',
    );
    expect(done).toMatchObject({ task_name: 'tasks.add', result: 5, user: 'runner', queue, args: [2, 3] });
  });

  it('accepts nested-array arguments (matrices, GeoJSON): stored in the history and with the result', async () => {
    const args = [[1, [2, [3]]], [[0.5, 'x']]];
    const kwargs = {
      matrix: [
        [1, 2],
        [3, 4],
      ],
      area: {
        type: 'Polygon',
        coordinates: [
          [
            [0, 0],
            [1, 0],
            [1, 1],
            [0, 0],
          ],
        ],
      },
    };
    const res = await submit('tasks.whoami', { args, kwargs });
    expect(res.status).toBe(202);
    const done = await until(
      async () => {
        const r = await call(app.url, 'GET', `/api/queue/task/${res.json.task_id}/`, { token: tokens.runner });
        return r.json?.status === 'SUCCESS' ? r.json : undefined;
      },
      20_000,
      'the whoami task',
    );
    expect(done).toMatchObject({ result: 'runner', args, kwargs });
    const history = await call(app.url, 'GET', '/api/queue/usertasks/?taskname=tasks.whoami&page_size=0', { token: tokens.runner });
    expect(history.status).toBe(200);
    expect(history.json.results.map((row: { task_id: string }) => row.task_id)).toContain(res.json.task_id);
  });

  it('waits for the result with ?wait=, reports failures as FAILURE, and times out to 202', async () => {
    const ok = await submit('tasks.add', { args: [20, 22] }, { wait: 15 });
    expect(ok.status).toBe(200);
    expect(ok.json).toMatchObject({ status: 'SUCCESS', result: 42 });
    const failed = await submit('tasks.fail', { args: ['boom'] }, { wait: 15 });
    expect(failed.status).toBe(200);
    expect(failed.json.status).toBe('FAILURE');
    expect(failed.json.error.message).toContain('boom');
    const slow = await submit('tasks.sleep', { args: [2] }, { wait: 0.3 });
    expect(slow.status).toBe(202);
    expect(slow.json.status).toBe('PENDING');
  });

  it('passes the authenticated user to the task', async () => {
    const res = await submit('tasks.whoami', {}, { wait: 15 });
    expect(res.json).toMatchObject({ status: 'SUCCESS', result: 'runner' });
  });

  it('refuses bad submissions with the documented 4xx and logs nothing', async () => {
    const before = (await call(app.url, 'GET', '/api/queue/usertasks/', { token: tokens.runner })).json.count;
    const cases: [string, Parameters<typeof call>[3], number, string?][] = [
      ['function mismatch', { body: { function: 'tasks.fail', queue, args: [] } }, 400, 'function_mismatch'],
      ['function missing', { body: { queue, args: [] } }, 400, 'function_mismatch'],
      ['args not an array', { body: { function: 'tasks.add', queue, args: { a: 1 } } }, 400, 'invalid_args'],
      ['kwargs an array', { body: { function: 'tasks.add', queue, kwargs: [] } }, 400, 'invalid_kwargs'],
      ['tags not strings', { body: { function: 'tasks.add', queue, tags: [1] } }, 400, 'invalid_tags'],
      ['unknown key', { body: { function: 'tasks.add', queue, priority: 9 } }, 400, 'unknown_field'],
      ['queue not live', { body: { function: 'tasks.add', queue: 'nobody-listens-here' } }, 400, 'invalid_queue'],
      ['queue of the wrong type', { body: { function: 'tasks.add', queue: 7 } }, 400, 'invalid_queue'],
      ['malformed JSON', { rawBody: '{"function": ' }, 400, 'malformed_json'],
      ['not JSON', { rawBody: 'function=tasks.add', contentType: 'application/x-www-form-urlencoded' }, 415],
      ['no body', {}, 400, 'missing_body'],
      ['body an array', { body: ['tasks.add'] }, 400, 'invalid_body'],
    ];
    for (const [name, options, status, code] of cases) {
      const res = await call(app.url, 'POST', '/api/queue/run/tasks.add/', { token: tokens.runner, ...options });
      expect(res.status, name).toBe(status);
      expect(res.json?.error?.status, name).toBe(status);
      if (code) expect(res.json.error.code, name).toBe(code);
    }
    const unknownTask = await call(app.url, 'POST', '/api/queue/run/tasks.unknown/', {
      token: tokens.root,
      body: { function: 'tasks.unknown', queue },
    });
    expect(unknownTask.status).toBe(404);
    const badName = await call(app.url, 'POST', '/api/queue/run/$bad/', { token: tokens.root, body: { function: '$bad' } });
    expect(badName.status).toBe(400);
    const tooLong = await call(app.url, 'POST', '/api/queue/run/tasks.add/?wait=31', {
      token: tokens.runner,
      body: { function: 'tasks.add', queue, args: [1, 1] },
    });
    expect(tooLong.status).toBe(400);
    const badWait = await call(app.url, 'POST', '/api/queue/run/tasks.add/?wait=soon', {
      token: tokens.runner,
      body: { function: 'tasks.add', queue, args: [1, 1] },
    });
    expect(badWait.status).toBe(400);
    const after = (await call(app.url, 'GET', '/api/queue/usertasks/', { token: tokens.runner })).json.count;
    expect(after).toBe(before);
  });

  it('needs the task permission: 401 anonymous, 403 without it, task admins may run anything', async () => {
    expect(
      (await call(app.url, 'POST', '/api/queue/run/tasks.add/', { body: { function: 'tasks.add', queue, args: [1, 2] } })).status,
    ).toBe(401);
    expect((await submit('tasks.add', { args: [1, 2] }, { as: 'nobody' })).status).toBe(403);
    expect((await submit('tasks.fail', {}, { as: 'other' })).status).toBe(403);
    expect((await submit('tasks.noop', {}, { as: 'taskadmin' })).status).toBe(202);
    expect((await submit('tasks.noop', {}, { as: 'root' })).status).toBe(202);
  });

  it('accepts the /.json suffix on the run path', async () => {
    const res = await call(app.url, 'POST', '/api/queue/run/tasks.add/.json', {
      token: tokens.runner,
      accept: '*/*',
      body: { function: 'tasks.add', queue, args: [1, 1] },
    });
    expect(res.status).toBe(202);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  });
});

describe('runs: privacy and revocation', () => {
  it('shows a run to its submitter, task admins and superusers only (404 for anyone else)', async () => {
    const res = await submit('tasks.add', { args: [1, 2] }, { wait: 15 });
    const path = `/api/queue/task/${res.json.task_id}/`;
    expect((await call(app.url, 'GET', path, { token: tokens.runner })).status).toBe(200);
    expect((await call(app.url, 'GET', path, { token: tokens.taskadmin })).status).toBe(200);
    expect((await call(app.url, 'GET', path, { token: tokens.root })).status).toBe(200);
    const stranger = await call(app.url, 'GET', path, { token: tokens.other });
    expect(stranger.status).toBe(404);
    expect((await call(app.url, 'GET', '/api/queue/task/00000000-0000-0000-0000-000000000000/', { token: tokens.root })).status).toBe(404);
    expect((await call(app.url, 'GET', path)).status).toBe(401);
  });

  it('revokes a running task; the state becomes REVOKED', async () => {
    const res = await submit('tasks.sleep', { args: [30] });
    expect(res.status).toBe(202);
    const id = res.json.task_id;
    await until(
      async () => (await call(app.url, 'GET', `/api/queue/task/${id}/`, { token: tokens.runner })).json?.status === 'STARTED',
      15_000,
      'the task to start',
    );
    expect((await call(app.url, 'POST', `/api/queue/task/${id}/revoke/`, { token: tokens.other, body: { terminate: true } })).status).toBe(
      404,
    );
    const revoked = await call(app.url, 'POST', `/api/queue/task/${id}/revoke/`, { token: tokens.runner, body: { terminate: true } });
    expect(revoked.status).toBe(200);
    expect(revoked.json.status).toBe('REVOKED');
    const later = await until(
      async () => {
        const r = await call(app.url, 'GET', `/api/queue/task/${id}/`, { token: tokens.runner });
        return r.json.status === 'REVOKED' ? r.json : undefined;
      },
      10_000,
      'REVOKED',
    );
    expect(later.status).toBe('REVOKED');
    expect(
      (await call(app.url, 'POST', `/api/queue/task/${id}/revoke/`, { token: tokens.runner, body: { terminate: 'yes' } })).status,
    ).toBe(400);
  });

  it('revokes a queued task before a worker sees it', async () => {
    // Occupy both worker slots, then queue one more and revoke it while it waits.
    const blockers = await Promise.all([submit('tasks.sleep', { args: [3] }), submit('tasks.sleep', { args: [3] })]);
    const queued = await submit('tasks.add', { args: [5, 5] });
    const revoked = await call(app.url, 'POST', `/api/queue/task/${queued.json.task_id}/revoke/`, { token: tokens.runner });
    expect(revoked.json.status).toBe('REVOKED');
    for (const b of blockers) {
      await until(
        async () => (await call(app.url, 'GET', `/api/queue/task/${b.json.task_id}/`, { token: tokens.runner })).json?.status === 'SUCCESS',
        20_000,
        'blockers',
      );
    }
    await new Promise((r) => setTimeout(r, 500));
    const final = await call(app.url, 'GET', `/api/queue/task/${queued.json.task_id}/`, { token: tokens.runner });
    expect(final.json.status).toBe('REVOKED');
    expect(final.json.result).toBeNull();
  });
});

describe('history', () => {
  it('lists the caller’s runs newest first with filters, and only theirs', async () => {
    const mine: string[] = [];
    for (const [task, args, tags] of [
      ['tasks.add', [1, 1], ['batch-a']],
      ['tasks.fail', ['x'], ['batch-a', 'bad']],
      ['tasks.add', [2, 2], ['batch-b']],
    ] as const) {
      mine.push((await submit(task, { args, tags }, { wait: 15 })).json.task_id);
    }
    await submit('tasks.add', { args: [9, 9], tags: ['batch-a'] }, { as: 'other', wait: 15 });
    const all = await call(app.url, 'GET', '/api/queue/usertasks/?page_size=3', { token: tokens.runner });
    expect(all.status).toBe(200);
    expect(all.json.results.map((r: { task_id: string }) => r.task_id)).toEqual([...mine].reverse());
    expect(all.json.results[0]).toMatchObject({
      task_name: 'tasks.add',
      status: 'SUCCESS',
      tags: ['batch-b'],
      url: `${app.url}/api/queue/task/${mine[2]}/`,
    });
    expect(all.json.next).not.toBeNull();
    const tagged = await call(app.url, 'GET', '/api/queue/usertasks/?tag=batch-a&page_size=0', { token: tokens.runner });
    expect(tagged.json.results.map((r: { task_id: string }) => r.task_id).slice(0, 2)).toEqual([mine[1], mine[0]]);
    expect(tagged.json.results.every((r: { tags: string[] }) => r.tags.includes('batch-a'))).toBe(true);
    const failures = await call(app.url, 'GET', '/api/queue/usertasks/?status=failure&taskname=tasks.fail,tasks.add&page_size=0', {
      token: tokens.runner,
    });
    expect(failures.json.results.every((r: { status: string }) => r.status === 'FAILURE')).toBe(true);
    expect(failures.json.results.map((r: { task_id: string }) => r.task_id)).toContain(mine[1]);
    const byName = await call(app.url, 'GET', '/api/queue/usertasks/?taskname=tasks.fail&page_size=0', { token: tokens.runner });
    expect(byName.json.results.every((r: { task_name: string }) => r.task_name === 'tasks.fail')).toBe(true);
    const others = await call(app.url, 'GET', '/api/queue/usertasks/?page_size=0', { token: tokens.other });
    expect(others.json.results.every((r: { task_id: string }) => !mine.includes(r.task_id))).toBe(true);
    expect((await call(app.url, 'GET', '/api/queue/usertasks/?status=bogus', { token: tokens.runner })).status).toBe(400);
    expect((await call(app.url, 'GET', '/api/queue/usertasks/')).status).toBe(401);
  });
});
