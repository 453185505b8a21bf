/** TaskCatalog over a stand-in remote-control client (pure merging/caching logic). */
import { describe, expect, it } from 'vitest';
import { TaskCatalog, defaultQueue } from '../../../src/queue/api/task-catalog.js';
import type { BroadcastOptions, ControlClient } from '../../../src/queue/remote-control/control-client.js';
import { parseTaskInfoReply } from '../../../src/queue/protocol/task-info.js';

function control(
  registered: Record<string, { name: string; attributes: Record<string, string> }[]>,
  queues: Record<string, { name: string }[]>,
  taskInfo: Record<string, unknown> = {},
) {
  let calls = 0;
  const taskInfoOptions: (BroadcastOptions | undefined)[] = [];
  const client = {
    registered: async () => {
      calls++;
      return registered;
    },
    activeQueues: async () => queues,
    taskInfo: async (options?: BroadcastOptions) => {
      taskInfoOptions.push(options);
      return Object.fromEntries(Object.entries(taskInfo).map(([node, value]) => [node, parseTaskInfoReply(value)]));
    },
  } as unknown as ControlClient;
  return { client, calls: () => calls, taskInfoOptions };
}

describe('TaskCatalog', () => {
  it('is empty when no worker answers', async () => {
    const snapshot = await new TaskCatalog(control({}, {}).client, { cacheSeconds: 5, replyTimeoutMs: 10 }).get();
    expect(snapshot.tasks.size).toBe(0);
    expect(snapshot.workers).toEqual([]);
    expect(snapshot.queues).toEqual([]);
  });

  it('merges tasks across workers with their queues and docstrings, hiding celery built-ins', async () => {
    const { client } = control(
      {
        'a@h': [
          { name: 'tasks.add', attributes: { __doc__: '  Add two numbers.\n ' } },
          { name: 'celery.chord_unlock', attributes: {} },
        ],
        'b@h': [
          { name: 'tasks.add', attributes: {} },
          { name: 'tasks.other', attributes: { __doc__: 'None' } },
        ],
      },
      { 'a@h': [{ name: 'celery' }], 'b@h': [{ name: 'remote' }, { name: 'celery' }] },
    );
    const snapshot = await new TaskCatalog(client, { cacheSeconds: 5, replyTimeoutMs: 10 }).get();
    expect([...snapshot.tasks.keys()].sort()).toEqual(['tasks.add', 'tasks.other']);
    expect(snapshot.tasks.get('tasks.add')).toEqual({
      name: 'tasks.add',
      docstring: 'Add two numbers.',
      signature: null,
      queues: ['celery', 'remote'],
      workers: ['a@h', 'b@h'],
    });
    expect(snapshot.tasks.get('tasks.other')?.docstring).toBeNull();
    expect(snapshot.queues).toEqual(['celery', 'remote']);
  });

  it('caches for the configured time and refreshes on demand', async () => {
    const c = control({ 'a@h': [{ name: 't', attributes: {} }] }, { 'a@h': [{ name: 'q' }] });
    const catalog = new TaskCatalog(c.client, { cacheSeconds: 60, replyTimeoutMs: 10 });
    await catalog.get();
    await catalog.get();
    expect(c.calls()).toBe(1);
    await catalog.get(true);
    expect(c.calls()).toBe(2);
    await Promise.all([catalog.get(true), catalog.get(true)]);
    expect(c.calls()).toBe(3);
  });

  it('serves an expired list at once while one broadcast refreshes it in the background', async () => {
    let workers: Record<string, { name: string; attributes: Record<string, string> }[]> = {
      'a@h': [
        { name: 'tasks.add', attributes: {} },
        { name: 'tasks.gone', attributes: {} },
      ],
    };
    let broadcasts = 0;
    const replyTimeoutMs = 300;
    const client = {
      // Like the real client: a broadcast lasts its whole reply timeout.
      registered: async () => {
        broadcasts++;
        const answer = workers;
        await new Promise((resolve) => setTimeout(resolve, replyTimeoutMs));
        return answer;
      },
      activeQueues: async () => ({ 'a@h': [{ name: 'celery' }] }),
      taskInfo: async () => ({}),
    } as unknown as ControlClient;
    const catalog = new TaskCatalog(client, { cacheSeconds: 0.05, replyTimeoutMs });

    // The first request ever waits for the broadcast.
    let started = Date.now();
    expect([...(await catalog.get()).tasks.keys()]).toEqual(['tasks.add', 'tasks.gone']);
    expect(Date.now() - started).toBeGreaterThanOrEqual(replyTimeoutMs - 5);

    // The task disappears from every worker; the list expires.
    workers = { 'a@h': [{ name: 'tasks.add', attributes: {} }] };
    await new Promise((resolve) => setTimeout(resolve, 80));
    started = Date.now();
    const stale = await Promise.all([catalog.get(), catalog.get(), catalog.get()]);
    expect(Date.now() - started).toBeLessThan(replyTimeoutMs / 3);
    for (const snapshot of stale) expect([...snapshot.tasks.keys()]).toEqual(['tasks.add', 'tasks.gone']);
    expect(broadcasts).toBe(2); // one background refresh for all three

    // Once the refresh is in, the gone task is gone.
    await new Promise((resolve) => setTimeout(resolve, replyTimeoutMs + 50));
    expect([...(await catalog.get()).tasks.keys()]).toEqual(['tasks.add']);
  });

  it('keeps serving the known list when a background refresh fails', async () => {
    let fail = false;
    let broadcasts = 0;
    const client = {
      registered: async () => {
        broadcasts++;
        if (fail) throw new Error('broker down');
        return { 'a@h': [{ name: 'tasks.add', attributes: {} }] };
      },
      activeQueues: async () => ({ 'a@h': [{ name: 'celery' }] }),
      taskInfo: async () => ({}),
    } as unknown as ControlClient;
    const catalog = new TaskCatalog(client, { cacheSeconds: 0.01, replyTimeoutMs: 10 });
    await catalog.get();
    fail = true;
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect([...(await catalog.get()).tasks.keys()]).toEqual(['tasks.add']);
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect([...(await catalog.get()).tasks.keys()]).toEqual(['tasks.add']);
    expect(broadcasts).toBeGreaterThanOrEqual(2);
    // An explicit refresh reports the failure.
    await expect(catalog.get(true)).rejects.toThrow('broker down');
  });

  it('asks on every request when the cache lifetime is 0', async () => {
    const c = control({ 'a@h': [{ name: 't', attributes: {} }] }, { 'a@h': [{ name: 'q' }] });
    const catalog = new TaskCatalog(c.client, { cacheSeconds: 0, replyTimeoutMs: 10 });
    await catalog.get();
    await catalog.get();
    expect(c.calls()).toBe(2);
  });

  it('prefers the celery queue as the default, else the first', () => {
    expect(defaultQueue({ name: 't', docstring: null, signature: null, queues: ['a', 'celery'], workers: [] })).toBe('celery');
    expect(defaultQueue({ name: 't', docstring: null, signature: null, queues: ['b', 'c'], workers: [] })).toBe('b');
    expect(defaultQueue({ name: 't', docstring: null, signature: null, queues: [], workers: [] })).toBeNull();
  });

  it('takes signatures, and docstrings registered did not give, from cybercom_task_info', async () => {
    const signature = {
      text: '(x, y=1)',
      parameters: [
        { name: 'x', kind: 'positional_or_keyword' },
        { name: 'y', kind: 'positional_or_keyword', default: 1 },
      ],
    };
    const { client } = control(
      {
        'a@h': [
          { name: 'tasks.add', attributes: { __doc__: 'From registered.' } },
          { name: 'tasks.undocumented', attributes: {} },
          { name: 'tasks.plain', attributes: {} },
        ],
        'b@h': [{ name: 'tasks.add', attributes: {} }],
        'old@h': [{ name: 'tasks.plain', attributes: {} }],
      },
      { 'a@h': [{ name: 'celery' }], 'b@h': [{ name: 'celery' }], 'old@h': [{ name: 'celery' }] },
      {
        // b@h sorts after a@h: its answer for tasks.add is not used.
        'b@h': { version: 1, tasks: { 'tasks.add': { doc: 'From b.', signature: { text: '(b)', parameters: [] } } } },
        'a@h': {
          version: 1,
          tasks: {
            'tasks.add': { doc: 'From the extension.', signature },
            'tasks.undocumented': { doc: '  Only here.\n', signature: null },
            'tasks.malformed': { doc: 5 },
            // Not offered by a@h's registered reply: ignored.
            'tasks.unlisted': { doc: 'x', signature: null },
          },
        },
        'old@h': { error: "KeyError('cybercom_task_info')" },
      },
    );
    const snapshot = await new TaskCatalog(client, { cacheSeconds: 5, replyTimeoutMs: 10 }).get();
    expect(snapshot.tasks.get('tasks.add')).toMatchObject({ docstring: 'From registered.', signature });
    expect(snapshot.tasks.get('tasks.undocumented')).toMatchObject({ docstring: 'Only here.', signature: null });
    expect(snapshot.tasks.get('tasks.plain')).toMatchObject({ docstring: null, signature: null, workers: ['a@h', 'old@h'] });
    expect(snapshot.tasks.has('tasks.unlisted')).toBe(false);
  });

  it('leaves workers that refused cybercom_task_info out of the next broadcasts', async () => {
    const c = control(
      { 'a@h': [{ name: 't', attributes: {} }], 'old.1@h': [{ name: 't', attributes: {} }] },
      { 'a@h': [{ name: 'q' }] },
      { 'a@h': { version: 1, tasks: {} }, 'old.1@h': { error: "KeyError('cybercom_task_info')" } },
    );
    const catalog = new TaskCatalog(c.client, { cacheSeconds: 0, replyTimeoutMs: 10 });
    await catalog.get();
    await catalog.get();
    expect(c.taskInfoOptions[0]).toEqual({ timeoutMs: 10 });
    expect(c.taskInfoOptions[1]).toEqual({ timeoutMs: 10, pattern: '(?!(?:old\\.1@h)$)', matcher: 'pcre' });
  });

  it('keeps a worker that misses one broadcast with its last answer, and drops it after a second miss in a row', async () => {
    type Registered = Record<string, { name: string; attributes: Record<string, string> }[]>;
    const both: Registered = { 'a@h': [{ name: 'tasks.add', attributes: {} }], 'slow@h': [{ name: 'tasks.calibrate', attributes: {} }] };
    const onlyA: Registered = { 'a@h': [{ name: 'tasks.add', attributes: {} }] };
    const rounds: { registered: Registered; queues: Record<string, { name: string }[]>; info: Record<string, unknown> }[] = [];
    const client = {
      registered: async () => rounds[0]!.registered,
      activeQueues: async () => rounds[0]!.queues,
      taskInfo: async () => Object.fromEntries(Object.entries(rounds[0]!.info).map(([node, value]) => [node, parseTaskInfoReply(value)])),
    } as unknown as ControlClient;
    const catalog = new TaskCatalog(client, { cacheSeconds: 0, replyTimeoutMs: 10 });
    const round = async (r: (typeof rounds)[number]) => {
      rounds.splice(0, 1, r);
      return catalog.get();
    };
    const slowInfo = { version: 1, tasks: { 'tasks.calibrate': { doc: 'Calibrates.', signature: { text: '(reading)', parameters: [] } } } };
    const queues = { 'a@h': [{ name: 'celery' }], 'slow@h': [{ name: 'lab' }] };

    await round({ registered: both, queues, info: { 'slow@h': slowInfo } });
    // slow@h answers none of the three broadcasts in time: still listed as it last answered.
    let snapshot = await round({ registered: onlyA, queues: { 'a@h': [{ name: 'celery' }] }, info: {} });
    expect(snapshot.tasks.get('tasks.calibrate')).toMatchObject({ queues: ['lab'], workers: ['slow@h'], docstring: 'Calibrates.' });
    expect(snapshot.workers).toEqual(['a@h', 'slow@h']);
    expect(snapshot.queues).toEqual(['celery', 'lab']);
    // It answers again: its count of misses starts over, so one more miss keeps it.
    await round({ registered: both, queues, info: {} });
    snapshot = await round({ registered: onlyA, queues: { 'a@h': [{ name: 'celery' }] }, info: {} });
    expect(snapshot.tasks.get('tasks.calibrate')?.workers).toEqual(['slow@h']);
    // A second miss in a row: gone.
    snapshot = await round({ registered: onlyA, queues: { 'a@h': [{ name: 'celery' }] }, info: {} });
    expect(snapshot.tasks.has('tasks.calibrate')).toBe(false);
    expect(snapshot.workers).toEqual(['a@h']);
    expect(snapshot.queues).toEqual(['celery']);
  });

  it('believes a worker that answers at once, and fills a broadcast it missed from its last answer', async () => {
    let registered: Record<string, { name: string; attributes: Record<string, string> }[]> = {
      'a@h': [
        { name: 'tasks.add', attributes: {} },
        { name: 'tasks.gone', attributes: {} },
      ],
    };
    let queues: Record<string, { name: string }[]> = { 'a@h': [{ name: 'celery' }] };
    const client = {
      registered: async () => registered,
      activeQueues: async () => queues,
      taskInfo: async () => ({}),
    } as unknown as ControlClient;
    const catalog = new TaskCatalog(client, { cacheSeconds: 0, replyTimeoutMs: 10 });
    await catalog.get();
    // It answers `registered` without tasks.gone but misses `active_queues`.
    registered = { 'a@h': [{ name: 'tasks.add', attributes: {} }] };
    queues = {};
    const snapshot = await catalog.get();
    expect([...snapshot.tasks.keys()]).toEqual(['tasks.add']);
    expect(snapshot.tasks.get('tasks.add')?.queues).toEqual(['celery']);
  });
});
