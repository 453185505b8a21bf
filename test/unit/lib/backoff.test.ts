import { describe, expect, it } from 'vitest';
import { Backoff } from '../../../src/lib/backoff.js';

describe('Backoff', () => {
  const options = { initialMs: 500, maxMs: 30_000, stableMs: 30_000 };

  it('doubles the wait for each failure in a row, up to the cap', () => {
    const backoff = new Backoff(options);
    expect([1, 2, 3, 4, 5, 6, 7, 8, 9].map(() => backoff.next())).toEqual([500, 1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]);
  });

  it('waits initialMs again after a reset', () => {
    const backoff = new Backoff(options);
    backoff.next();
    backoff.next();
    backoff.reset();
    expect(backoff.next()).toBe(500);
  });

  it('restarts a process that ran a while after the initial wait', () => {
    const backoff = new Backoff(options);
    expect(backoff.afterRun(3_600_000)).toBe(500);
    expect(backoff.afterRun(3_600_000)).toBe(500);
  });

  it('doubles the wait for each quick end in a row, and starts over once a process has run stableMs', () => {
    const backoff = new Backoff(options);
    backoff.afterRun(100);
    backoff.afterRun(100);
    expect(backoff.afterRun(100)).toBe(2000);
    expect(backoff.afterRun(30_000)).toBe(500);
    expect(backoff.afterRun(100)).toBe(1000);
  });

  it('spreads each wait by the jitter fraction either way', () => {
    const low = new Backoff({ initialMs: 1000, maxMs: 10_000, jitter: 0.2 }, () => 0);
    const high = new Backoff({ initialMs: 1000, maxMs: 10_000, jitter: 0.2 }, () => 0.999_999);
    expect([low.next(), low.next()]).toEqual([800, 1600]);
    expect([high.next(), high.next()]).toEqual([1200, 2400]);
  });
});
