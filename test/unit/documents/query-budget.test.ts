import { afterEach, describe, expect, it, vi } from 'vitest';
import { QueryBudget, graceMs } from '../../../src/documents/query-budget.js';
import { DatabaseError } from '../../../src/db/errors.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('QueryBudget', () => {
  it('hands each operation the remaining budget as its server-side limit', async () => {
    let now = 0;
    const budget = new QueryBudget(1_000, () => now);
    const limits: number[] = [];
    await budget.run(async (maxTimeMS) => {
      limits.push(maxTimeMS);
      now += 300;
    });
    await budget.run(async (maxTimeMS) => {
      limits.push(maxTimeMS);
      now += 500;
    });
    expect(limits).toEqual([1_000, 700]);
    expect(budget.remainingMs()).toBe(200);
  });

  it('counts overlapping operations once and time between them not at all', async () => {
    let now = 0;
    const budget = new QueryBudget(1_000, () => now);
    let finishA!: () => void;
    let finishB!: () => void;
    const a = budget.run(() => new Promise<void>((r) => (finishA = r)));
    const b = budget.run(() => new Promise<void>((r) => (finishB = r)));
    now = 400;
    finishA();
    await a;
    now = 600;
    finishB();
    await b;
    now = 5_000; // e.g. a slow client reading what was fetched
    expect(budget.remainingMs()).toBe(400);
  });

  it('refuses to start once the budget is used up', async () => {
    let now = 0;
    const budget = new QueryBudget(100, () => now);
    await budget.run(async () => {
      now = 150;
    });
    const work = vi.fn(async () => 1);
    await expect(budget.run(work)).rejects.toMatchObject({ name: 'DatabaseError', kind: 'query_timeout', code: 'query_timeout' });
    expect(work).not.toHaveBeenCalled();
  });

  it('gives up on an operation that outlasts the budget plus the grace, and aborts it', async () => {
    vi.useFakeTimers();
    const budget = new QueryBudget(1_000);
    let signal!: AbortSignal;
    const pending = budget.run((_, s) => {
      signal = s;
      return new Promise(() => undefined); // an engine that never answers
    });
    const outcome = pending.catch((err: unknown) => err);
    await vi.advanceTimersByTimeAsync(1_000 + graceMs(1_000) - 1);
    expect(signal.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    const err = await outcome;
    expect(err).toBeInstanceOf(DatabaseError);
    expect(err).toMatchObject({ name: 'DatabaseError', kind: 'query_timeout', code: 'query_timeout' });
    expect(signal.aborted).toBe(true);
  });

  it('counts an operation started ahead of need only from when it is waited for', async () => {
    let now = 0;
    const budget = new QueryBudget(1_000, () => now);
    let answer!: (more: boolean) => void;
    const ahead = new Promise<boolean>((r) => (answer = r));
    now = 700; // the API renders the batch before; the engine answers meanwhile
    answer(true);
    await expect(budget.wait(ahead, new AbortController())).resolves.toBe(true);
    expect(budget.remainingMs()).toBe(1_000);
  });

  it('aborts an operation started ahead when the budget is already used up by the time it is waited for', async () => {
    let now = 0;
    const budget = new QueryBudget(100, () => now);
    await budget.run(async () => {
      now = 150;
    });
    const controller = new AbortController();
    await expect(budget.wait(Promise.resolve(true), controller)).rejects.toMatchObject({ code: 'query_timeout' });
    expect(controller.signal.aborted).toBe(true);
  });

  it('passes the engine’s own errors through', async () => {
    const budget = new QueryBudget(1_000);
    const engineError = Object.assign(new Error('operation exceeded time limit'), { code: 50 });
    await expect(budget.run(async () => Promise.reject(engineError))).rejects.toBe(engineError);
  });

  it('waits a little past the limit for the engine’s own answer: 10 %, between 0.2 and 2 s', () => {
    expect(graceMs(400)).toBe(200);
    expect(graceMs(5_000)).toBe(500);
    expect(graceMs(30_000)).toBe(2_000);
  });
});
