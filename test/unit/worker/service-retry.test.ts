import { describe, expect, it, vi } from 'vitest';
import { OperationAborted, abortable, retrying, sleep } from '../../../src/worker/service-retry.js';

describe('retrying an operation against a service', () => {
  it('retries until it answers, reporting each retry', async () => {
    let calls = 0;
    const onRetry = vi.fn();
    const value = await retrying(
      async () => {
        calls += 1;
        if (calls < 3) throw new Error(`down ${calls}`);
        return 'up';
      },
      { deadlineMs: 10_000, initialDelayMs: 1, maxDelayMs: 2, onRetry },
    );
    expect(value).toBe('up');
    expect(onRetry.mock.calls.map(([error, attempt]) => [(error as Error).message, attempt])).toEqual([
      ['down 1', 1],
      ['down 2', 2],
    ]);
  });

  it('rethrows at once what retrying cannot help, and the last error past the deadline', async () => {
    const refused = new Error('refused');
    await expect(retrying(() => Promise.reject(refused), { deadlineMs: 10_000, retryIf: () => false })).rejects.toBe(refused);
    await expect(retrying(() => Promise.reject(new Error('still down')), { deadlineMs: 0 })).rejects.toThrow('still down');
  });

  it('stops when its signal fires, and so does a wait on it', async () => {
    const controller = new AbortController();
    const attempts = retrying(() => Promise.reject(new Error('down')), {
      deadlineMs: Number.POSITIVE_INFINITY,
      initialDelayMs: 60_000,
      signal: controller.signal,
    });
    const never = new Promise<never>(() => undefined);
    const waiting = abortable(never, controller.signal);
    const started = Date.now();
    controller.abort();
    await expect(attempts).rejects.toThrow('down');
    await expect(waiting).rejects.toBeInstanceOf(OperationAborted);
    await sleep(60_000, controller.signal);
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});
