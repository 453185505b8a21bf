import { describe, expect, it } from 'vitest';
import { delayAfterMs, deviceTrusted, lockedForMs } from '../../../src/auth/login-delays.js';

const T0 = 1_700_000_000_000;
const at = (...offsetsMs: number[]) => ({ failures: offsetsMs.map((o) => new Date(T0 + o)) });

describe('the login throttle decision for an unknown device', () => {
  const limit = { maxFailures: 3, windowSeconds: 60 };

  it('lets the free failures through, then delays 2 s, 4 s, 8 s ... after the newest failure', () => {
    expect(lockedForMs(at(0, 1000), 0, limit, T0 + 1001)).toBe(0);
    // the third failure at t0+2 s: the next attempt waits 2 s from it
    expect(lockedForMs(at(0, 1000, 2000), 0, limit, T0 + 3000)).toBe(1000);
    expect(lockedForMs(at(0, 1000, 2000), 0, limit, T0 + 4000)).toBe(0);
    expect(lockedForMs(at(0, 1000, 2000, 4000), 0, limit, T0 + 4000)).toBe(4000);
    expect(lockedForMs(at(0, 1000, 2000, 4000, 8000), 0, limit, T0 + 8000)).toBe(8000);
  });

  it('never waits longer than the window, and forgets failures that left it', () => {
    expect(delayAfterMs(2, limit)).toBe(0);
    expect(delayAfterMs(3, limit)).toBe(2000);
    expect(delayAfterMs(7, limit)).toBe(32_000);
    expect(delayAfterMs(8, limit)).toBe(60_000);
    expect(delayAfterMs(1_000, limit)).toBe(60_000);
    expect(lockedForMs(at(0, 1000, 2000), 0, limit, T0 + 61_000)).toBe(0);
  });

  it('counts places in flight before the caller: one attempt at a time once they could use up the free failures', () => {
    expect(lockedForMs(at(0), 2, limit, T0 + 10)).toBe(1000);
    expect(lockedForMs(at(0), 1, limit, T0 + 10)).toBe(0);
    expect(lockedForMs(null, 3, limit, T0)).toBe(1000);
    expect(lockedForMs(null, 2, limit, T0)).toBe(0);
    // Past the delay, the first attempt goes; the ones behind it wait for its outcome.
    expect(lockedForMs(at(0, 1000, 2000), 0, limit, T0 + 5000)).toBe(0);
    expect(lockedForMs(at(0, 1000, 2000), 1, limit, T0 + 5000)).toBe(1000);
  });

  it('ignores failures outside the window when counting places', () => {
    expect(lockedForMs(at(0, 1000), 1, limit, T0 + 61_000)).toBe(0);
  });
});

describe('trust in a device cookie', () => {
  const limit = { maxFailures: 3, windowSeconds: 60 };

  it('holds below maxFailures recent failures, attempts in flight included', () => {
    expect(deviceTrusted(null, 0, limit, T0)).toBe(true);
    expect(deviceTrusted(at(0, 1000), 0, limit, T0 + 2000)).toBe(true);
    expect(deviceTrusted(at(0, 1000), 1, limit, T0 + 2000)).toBe(false);
    expect(deviceTrusted(at(0, 1000, 2000), 0, limit, T0 + 3000)).toBe(false);
    expect(deviceTrusted(at(0, 1000, 2000), 0, limit, T0 + 60_001)).toBe(true);
  });
});
