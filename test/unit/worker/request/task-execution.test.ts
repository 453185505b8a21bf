import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { SoftTimeLimitExceeded, TaskRevokedError } from '../../../../src/queue/results/exceptions.js';
import type { DataStore } from '../../../../src/worker/data-store.js';
import { defineTask, type TaskContext, type TaskRunFunction } from '../../../../src/worker/task-definition.js';
import { TaskExecution, WorkerShutdown } from '../../../../src/worker/request/task-execution.js';

const noLimits = { hardSeconds: null, softSeconds: null };

function context(args: unknown[] = [], kwargs: Record<string, unknown> = {}): Omit<TaskContext, 'signal'> {
  return {
    taskId: 'id-1',
    taskName: 't',
    authenticatedUser: 'alice',
    args: args as never,
    kwargs: kwargs as never,
    headers: {},
    retries: 0,
    rootId: null,
    parentId: null,
    retry: () => {
      throw new Error('retry not expected');
    },
    hostname: 'ts@host',
    dataStore: {} as DataStore,
    logger: pino({ level: 'silent' }),
  };
}

const task = (run: TaskRunFunction) => defineTask({ name: 't', run });

describe('TaskExecution', () => {
  it('passes positional args after the context and kwargs in ctx.kwargs (sync and async)', async () => {
    const sync = await new TaskExecution().run(
      task((ctx, a: number, b: number) => [a + b, ctx.kwargs.k, ctx.authenticatedUser]),
      context([2, 3], { k: 'v' }),
      noLimits,
    );
    expect(sync).toMatchObject({ state: 'SUCCESS', value: [5, 'v', 'alice'] });
    const async = await new TaskExecution().run(
      task(async (_ctx, a: number) => a * 2),
      context([21]),
      noLimits,
    );
    expect(async).toMatchObject({ state: 'SUCCESS', value: 42 });
  });

  it('turns a thrown error (sync or async) into a FAILURE with exception info and traceback', async () => {
    const outcome = await new TaskExecution().run(
      task(() => {
        throw new TypeError('bad input');
      }),
      context(),
      noLimits,
    );
    expect(outcome.state).toBe('FAILURE');
    if (outcome.state !== 'FAILURE') return;
    expect(outcome.exception).toEqual({ exc_type: 'TypeError', exc_message: ['bad input'], exc_module: 'builtins' });
    expect(outcome.traceback).toMatch(/^Traceback \(most recent call last\):\n[\s\S]*TypeError: bad input\n$/);
  });

  it('reports a non-JSON return value as EncodeError', async () => {
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    const outcome = await new TaskExecution().run(
      task(() => circular),
      context(),
      noLimits,
    );
    expect(outcome.state === 'FAILURE' && outcome.exception.exc_type).toBe('EncodeError');
  });

  it('enforces the hard limit even when the task ignores its signal', async () => {
    const started = Date.now();
    const outcome = await new TaskExecution().run(
      task(() => new Promise(() => undefined)),
      context(),
      { hardSeconds: 0.2, softSeconds: null },
    );
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(outcome.state === 'FAILURE' && outcome.exception).toEqual({
      exc_type: 'TimeLimitExceeded',
      exc_message: [0.2],
      exc_module: 'billiard.exceptions',
    });
  });

  it('fires the signal with SoftTimeLimitExceeded at the soft limit and lets the task react', async () => {
    const outcome = await new TaskExecution().run(
      task(
        (ctx) =>
          new Promise((resolve) => {
            ctx.signal.addEventListener('abort', () =>
              resolve(ctx.signal.reason instanceof SoftTimeLimitExceeded ? 'cleaned up' : 'wrong'),
            );
          }),
      ),
      context(),
      { hardSeconds: 5, softSeconds: 0.1 },
    );
    expect(outcome).toMatchObject({ state: 'SUCCESS', value: 'cleaned up' });
  });

  it('stops with REVOKED(terminated) and aborts the signal on terminate', async () => {
    const execution = new TaskExecution();
    let sawAbort = false;
    const running = execution.run(
      task((ctx) => new Promise(() => ctx.signal.addEventListener('abort', () => (sawAbort = true)))),
      context(),
      noLimits,
    );
    setTimeout(() => execution.stop(new TaskRevokedError('terminated')), 50);
    expect(await running).toMatchObject({ state: 'REVOKED', reason: 'terminated' });
    expect(sawAbort).toBe(true);
  });

  it('is ABANDONED when stopped by shutdown (nothing recorded)', async () => {
    const execution = new TaskExecution();
    const running = execution.run(
      task(() => new Promise(() => undefined)),
      context(),
      noLimits,
    );
    execution.stop(new WorkerShutdown());
    expect((await running).state).toBe('ABANDONED');
  });
});
