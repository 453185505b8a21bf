import { describe, expect, it } from 'vitest';
import { InvalidSignatureError, chainTaskIds, parseSignature, popChain, signatureMessages } from '../../../src/worker/canvas.js';
import { parseHeaderResults } from '../../../src/worker/chord-unlock.js';
import { MaxRetriesExceededError, Retry, requestRetry } from '../../../src/worker/request/task-retry.js';

const sig = (task: string, extra: Record<string, unknown> = {}) => ({
  task,
  args: [],
  kwargs: {},
  options: {},
  subtask_type: null,
  immutable: false,
  chord_size: null,
  ...extra,
});
const ctx = { parentId: 'p-1', rootId: 'r-1', defaultQueue: 'celery', now: new Date('2024-01-01T00:00:00Z') };

describe('signatures', () => {
  it('parses Celery’s serialized Signature and refuses malformed ones', () => {
    expect(parseSignature(sig('a.b', { args: [1], immutable: true }) as never)).toEqual({
      task: 'a.b',
      args: [1],
      kwargs: {},
      options: {},
      subtaskType: null,
      immutable: true,
    });
    expect(() => parseSignature({ args: [] })).toThrow(InvalidSignatureError);
    expect(() => parseSignature(sig('a', { args: 'x' }) as never)).toThrow(InvalidSignatureError);
    expect(() => parseSignature([] as never)).toThrow(InvalidSignatureError);
  });

  it('pops the next chain step from the end and keeps the rest in order', () => {
    const chain = [sig('third', { options: { task_id: 't3' } }), sig('second', { options: { task_id: 't2' } })];
    const popped = popChain(chain as never);
    expect(popped?.next.task).toBe('second');
    expect(popped?.rest).toEqual([chain[0]]);
    expect(popChain([])).toBeNull();
    expect(popChain(null)).toBeNull();
    expect(chainTaskIds(chain as never)).toEqual(['t3', 't2']);
  });

  it('prepends the parent result unless immutable and maps the options', () => {
    const link = [sig('cb')];
    const [message] = signatureMessages(
      parseSignature(
        sig('next', { args: [5], options: { task_id: 'n-1', queue: 'q1', countdown: 10, expires: 60, link, priority: 3 } }) as never,
      ),
      { ...ctx, args: [30], chain: [sig('later') as never] },
    );
    expect(message).toMatchObject({
      taskName: 'next',
      taskId: 'n-1',
      args: [30, 5],
      queue: 'q1',
      parentId: 'p-1',
      rootId: 'r-1',
      eta: new Date('2024-01-01T00:00:10Z'),
      expires: new Date('2024-01-01T00:01:00Z'),
      priority: 3,
      embed: { callbacks: link, errbacks: null, chain: [sig('later')], chord: null },
    });
    const [immutable] = signatureMessages(parseSignature(sig('imm', { args: [1], immutable: true }) as never), { ...ctx, args: [30] });
    expect(immutable).toMatchObject({ args: [1], queue: 'celery' });
    expect(immutable!.taskId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('expands a group callback into members sharing the group id, and a chain into its first step', () => {
    const group = sig('celery.group', {
      subtask_type: 'group',
      options: { task_id: 'g-1' },
      kwargs: { tasks: [sig('m1'), sig('m2', { args: [9] })] },
    });
    const messages = signatureMessages(parseSignature(group as never), { ...ctx, args: [1] });
    expect(messages.map((m) => [m.taskName, m.args, m.groupId, m.groupIndex])).toEqual([
      ['m1', [1], 'g-1', 0],
      ['m2', [1, 9], 'g-1', 1],
    ]);
    const chain = sig('celery.chain', { subtask_type: 'chain', kwargs: { tasks: [sig('s1'), sig('s2'), sig('s3')] } });
    const [first] = signatureMessages(parseSignature(chain as never), { ...ctx, args: [1] });
    expect(first?.taskName).toBe('s1');
    expect((first?.embed?.chain as Array<{ task: string }>).map((s) => s.task)).toEqual(['s3', 's2']);
    expect(() => signatureMessages(parseSignature(sig('c', { subtask_type: 'chord' }) as never), ctx)).toThrow(InvalidSignatureError);
  });

  it('the parent message’s headers win over the signature’s', () => {
    const [message] = signatureMessages(
      parseSignature(sig('x', { options: { headers: { a: 1, authenticated_user_access: 'forged' } } }) as never),
      {
        ...ctx,
        inheritedHeaders: { authenticated_user_access: 'real' },
        authenticatedUser: 'alice',
      },
    );
    expect(message).toMatchObject({ headers: { a: 1, authenticated_user_access: 'real' }, authenticatedUser: 'alice' });
  });

  it('reads chord header result tuples, nested groups included', () => {
    expect(
      parseHeaderResults([
        [['a', null], null],
        [['g', null], [[['b', ['a', null]], null]]],
      ]),
    ).toEqual([
      { id: 'a', members: null },
      { id: 'g', members: [{ id: 'b', members: null }] },
    ]);
    expect(() => parseHeaderResults([[1]])).toThrow(InvalidSignatureError);
  });
});

describe('retry requests', () => {
  const request = { taskId: 'id-1', taskName: 't.x', retries: 0, args: [1], kwargs: { k: 'v' } };
  const policy = { maxRetries: 2, defaultRetryDelaySeconds: 180 };
  const now = new Date('2024-01-01T00:00:00Z');
  const thrown = (fn: () => never): unknown => {
    try {
      fn();
    } catch (error) {
      return error;
    }
    throw new Error('did not throw');
  };

  it('throws Retry with the countdown, eta, or the default delay', () => {
    const a = thrown(() => requestRetry(request, policy, { countdown: 5 }, now)) as Retry;
    expect(a).toBeInstanceOf(Retry);
    expect(a.when).toEqual(new Date('2024-01-01T00:00:05Z'));
    expect(a.nextArgs).toEqual([1]);
    expect((thrown(() => requestRetry(request, policy, {}, now)) as Retry).when).toEqual(new Date('2024-01-01T00:03:00Z'));
    const eta = new Date('2024-02-01T00:00:00Z');
    expect(thrown(() => requestRetry(request, policy, { eta, countdown: 1, args: [2] }, now)) as Retry).toMatchObject({
      when: eta,
      nextArgs: [2],
    });
  });

  it('past max_retries: the given exception, else MaxRetriesExceededError', () => {
    const last = { ...request, retries: 2 };
    const error = thrown(() => requestRetry(last, policy, {}, now));
    expect(error).toBeInstanceOf(MaxRetriesExceededError);
    expect((error as Error).message).toBe("Can't retry t.x[id-1] args:(1,) kwargs:{'k': 'v'}");
    const reason = new Error('why');
    expect(thrown(() => requestRetry(last, policy, { exc: reason }, now))).toBe(reason);
    expect(thrown(() => requestRetry(last, policy, { maxRetries: 5 }, now))).toBeInstanceOf(Retry);
    expect(thrown(() => requestRetry({ ...request, retries: 100 }, { ...policy, maxRetries: null }, {}, now))).toBeInstanceOf(Retry);
  });
});
