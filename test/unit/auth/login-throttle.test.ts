import { describe, expect, it } from 'vitest';
import { lockedForMs } from '../../../src/auth/login-throttle.js';

const T0 = 1_700_000_000_000;
const at = (...offsetsMs: number[]) => ({ failures: offsetsMs.map((o) => new Date(T0 + o)) });

describe('lockedForMs (the login throttle decision)', () => {
  const settings = { maxFailures: 3, windowSeconds: 60 };

  it('locks after maxFailures within the window, until the oldest relevant failure leaves it', () => {
    // failures at t0, t0+1 s, t0+2 s; now t0+3 s → the first leaves the window in 57 s
    expect(lockedForMs(at(0, 1000, 2000), 0, settings, T0 + 3000)).toBe(57_000);
    expect(lockedForMs(at(0, 1000), 0, settings, T0 + 3000)).toBe(0);
  });

  it('unlocks once failures leave the window', () => {
    expect(lockedForMs(at(0, 1000, 2000), 0, settings, T0 + 60_001)).toBe(0);
  });

  it('counts places in flight before the caller: locked for a second while they run', () => {
    expect(lockedForMs(at(0), 2, settings, T0 + 10)).toBe(1000);
    expect(lockedForMs(at(0), 1, settings, T0 + 10)).toBe(0);
    expect(lockedForMs(null, 3, settings, T0)).toBe(1000);
    expect(lockedForMs(null, 2, settings, T0)).toBe(0);
  });

  it('ignores failures outside the window when counting places', () => {
    expect(lockedForMs(at(0, 1000), 1, settings, T0 + 61_000)).toBe(0);
  });
});
