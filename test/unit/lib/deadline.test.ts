/** withDeadline: the caller hears back by the deadline, whatever the work does. */
import { describe, expect, it } from 'vitest';
import { withDeadline } from '../../../src/lib/deadline.js';

const late = () => new Error('late');

describe('withDeadline', () => {
  it('answers what the work answers in time, and its failure', async () => {
    await expect(withDeadline(1000, late, async () => 42)).resolves.toBe(42);
    await expect(withDeadline(1000, late, () => Promise.reject(new Error('refused')))).rejects.toThrow('refused');
  });

  it('answers a synchronous throw of the work as its failure', async () => {
    await expect(
      withDeadline(1000, late, () => {
        throw new Error('at once');
      }),
    ).rejects.toThrow('at once');
  });

  it('fails with timedOut() at the deadline, aborts the signal with it, and ignores the late outcome', async () => {
    let seen: AbortSignal | undefined;
    const started = Date.now();
    const outcome = withDeadline(50, late, (signal) => {
      seen = signal;
      return new Promise((resolve) => setTimeout(() => resolve('too late'), 300));
    });
    await expect(outcome).rejects.toThrow('late');
    expect(Date.now() - started).toBeLessThan(250);
    expect(seen?.aborted).toBe(true);
    expect((seen?.reason as Error).message).toBe('late');
  });

  it('aborts a given controller at the deadline', async () => {
    const controller = new AbortController();
    await expect(withDeadline(20, late, () => new Promise(() => undefined), controller)).rejects.toThrow('late');
    expect(controller.signal.aborted).toBe(true);
  });
});
