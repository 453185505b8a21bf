import { describe, expect, it } from 'vitest';
import { RestartBackoff } from '../../../src/runtime/cluster/restart-backoff.js';

describe('RestartBackoff (restarting an ended API process)', () => {
  const options = { initialMs: 500, maxMs: 30_000, stableMs: 30_000 };

  it('restarts a process that ran a while after the initial delay', () => {
    const backoff = new RestartBackoff(options);
    expect(backoff.next(3_600_000)).toBe(500);
    expect(backoff.next(3_600_000)).toBe(500);
  });

  it('doubles the delay for each quick end in a row, up to the cap', () => {
    const backoff = new RestartBackoff(options);
    expect([1, 2, 3, 4, 5, 6, 7, 8, 9].map(() => backoff.next(100))).toEqual([500, 1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]);
  });

  it('starts over once a process has run stableMs', () => {
    const backoff = new RestartBackoff(options);
    backoff.next(100);
    backoff.next(100);
    expect(backoff.next(100)).toBe(2000);
    expect(backoff.next(30_000)).toBe(500);
    expect(backoff.next(100)).toBe(1000);
  });
});
