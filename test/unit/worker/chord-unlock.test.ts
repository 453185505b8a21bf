/**
 * `celery.chord_unlock` on the TypeScript worker when a header task ends REVOKED. Celery's own
 * chord_unlock joins the header with propagate=True, which raises for REVOKED as for FAILURE, so
 * the body is stored as a ChordError FAILURE and the body's errbacks are sent with its id. (The
 * revoked task itself sends no errbacks, on Celery's workers as on this one: see the canvas
 * interop test.)
 */
import { describe, expect, it } from 'vitest';
import type { PublishTaskInput } from '../../../src/queue/publishing/task-publisher.js';
import type { ResultStore } from '../../../src/queue/results/result-store.js';
import type { CeleryExceptionInfo } from '../../../src/queue/results/exceptions.js';
import { chordUnlockTask } from '../../../src/worker/chord-unlock.js';
import type { TaskContext } from '../../../src/worker/task-definition.js';

const revoked: CeleryExceptionInfo = { exc_type: 'TaskRevokedError', exc_message: ['revoked'], exc_module: 'celery.exceptions' };

/** Results as the backend holds them; markFailure calls are recorded. */
function fakeStore(states: Record<string, { status: string; result?: unknown; exception?: CeleryExceptionInfo }>) {
  const failures: { id: string; exception: CeleryExceptionInfo }[] = [];
  const store = {
    get: async (id: string) => ({ task_id: id, result: null, exception: null, ...states[id] }),
    markFailure: async (id: string, exception: CeleryExceptionInfo) => {
      failures.push({ id, exception });
    },
  };
  return { store: store as unknown as ResultStore, failures };
}

function unlock(states: Parameters<typeof fakeStore>[0]) {
  const { store, failures } = fakeStore(states);
  const published: PublishTaskInput[] = [];
  const task = chordUnlockTask({
    results: () => store,
    publish: async (messages) => void published.push(...messages),
    defaultQueue: 'celery',
  });
  const body = {
    task: 'tasks.sum',
    args: [],
    kwargs: {},
    options: {
      task_id: 'body-1',
      link_error: [{ task: 'tasks.on_error', args: [], kwargs: {}, options: { queue: 'errors' }, subtask_type: null, immutable: false }],
    },
    subtask_type: null,
    immutable: false,
  };
  const ctx = {
    taskId: 'unlock-1',
    rootId: 'root-1',
    kwargs: {
      result: [
        [['h-1', null], null],
        [['h-2', null], null],
      ],
    },
    retry: () => {
      throw new Error('retry asked for');
    },
    logger: { warn: () => undefined },
  } as unknown as TaskContext;
  return { run: () => task.run(ctx, 'group-1', body), published, failures };
}

describe('celery.chord_unlock with a revoked header task', () => {
  it('fails the body with ChordError and sends the body’s errbacks with the body’s id', async () => {
    const { run, published, failures } = unlock({
      'h-1': { status: 'SUCCESS', result: 1 },
      'h-2': { status: 'REVOKED', exception: revoked },
    });
    await run();
    expect(failures).toEqual([
      {
        id: 'body-1',
        exception: {
          exc_type: 'ChordError',
          exc_message: ["Dependency h-2 raised TaskRevokedError('revoked')"],
          exc_module: 'celery.exceptions',
        },
      },
    ]);
    expect(published).toHaveLength(1);
    expect(published[0]).toMatchObject({
      taskName: 'tasks.on_error',
      args: ['body-1'],
      queue: 'errors',
      parentId: 'body-1',
      rootId: 'root-1',
    });
  });

  it('sends the body, and no errback, when every header task succeeded', async () => {
    const { run, published, failures } = unlock({ 'h-1': { status: 'SUCCESS', result: 1 }, 'h-2': { status: 'SUCCESS', result: 2 } });
    await run();
    expect(failures).toEqual([]);
    expect(published).toHaveLength(1);
    expect(published[0]).toMatchObject({ taskName: 'tasks.sum', args: [[1, 2]], taskId: 'body-1' });
  });
});
