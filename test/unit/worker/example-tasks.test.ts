import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { add, fail, noop, sleep, whoami, writeRecord } from '../../../worker-image/tasks/index.js';
import type { DataStore } from '../../../src/worker/data-store.js';
import type { TaskContext } from '../../../src/worker/task-definition.js';

function ctx(overrides: Partial<TaskContext> = {}): TaskContext {
  return {
    taskId: 'id',
    taskName: 'x',
    authenticatedUser: 'alice',
    args: [],
    kwargs: {},
    headers: {},
    retries: 0,
    rootId: null,
    parentId: null,
    retry: () => {
      throw new Error('retry not expected');
    },
    hostname: 'ts@h',
    signal: new AbortController().signal,
    dataStore: {} as DataStore,
    logger: pino({ level: 'silent' }),
    ...overrides,
  };
}

describe('example tasks', () => {
  it('tasks.add adds and refuses non-numbers', () => {
    expect(add.run(ctx(), 2, 3)).toBe(5);
    expect(() => add.run(ctx(), '2', 3)).toThrow(TypeError);
    expect(add.doc).toBe('Add two numbers.');
  });

  it('tasks.sleep resolves after the delay and rejects with the abort reason', async () => {
    await expect(sleep.run(ctx(), 0.01)).resolves.toBe(0.01);
    const controller = new AbortController();
    const pending = sleep.run(ctx({ signal: controller.signal }), 30);
    const reason = new Error('stop');
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
  });

  it('tasks.fail throws its message; noop returns null; whoami returns the user', () => {
    expect(() => fail.run(ctx(), 'nope')).toThrow('nope');
    expect(noop.run(ctx())).toBeNull();
    expect(whoami.run(ctx())).toBe('alice');
    expect(whoami.run(ctx({ authenticatedUser: null }))).toBeNull();
  });

  it('tasks.write_record validates its keyword arguments before touching the database', async () => {
    await expect(writeRecord.run(ctx({ kwargs: { collection: 'c', record: {} } }))).rejects.toThrow(/database/);
    await expect(writeRecord.run(ctx({ kwargs: { database: 'd', collection: 'c', record: [1] } }))).rejects.toThrow(/record/);
  });
});
