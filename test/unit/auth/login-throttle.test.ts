import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/errors.js';
import { LoginThrottle } from '../../../src/auth/login-throttle.js';

function clock(start = 1_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

function throttled(fn: () => void): ApiError | null {
  try {
    fn();
    return null;
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
}

describe('LoginThrottle', () => {
  it('locks a username after maxFailures within the window, with Retry-After', () => {
    const c = clock();
    const t = new LoginThrottle({ maxFailures: 3, windowSeconds: 60 }, c.now);
    for (let i = 0; i < 3; i++) {
      expect(throttled(() => t.check('alice', `10.0.0.${i}`))).toBeNull();
      t.recordFailure('alice', `10.0.0.${i}`);
      c.advance(1_000);
    }
    const error = throttled(() => t.check('ALICE', '10.9.9.9'));
    expect(error?.status).toBe(429);
    expect(error?.code).toBe('throttled');
    // first failure at t0, window 60 s, now t0 + 3 s → 57 s left
    expect(error?.headers['Retry-After']).toBe('57');
  });

  it('locks a client address across usernames', () => {
    const t = new LoginThrottle({ maxFailures: 2, windowSeconds: 60 }, clock().now);
    t.recordFailure('a', '192.0.2.1');
    t.recordFailure('b', '192.0.2.1');
    expect(throttled(() => t.check('c', '192.0.2.1'))?.status).toBe(429);
    expect(throttled(() => t.check('c', '192.0.2.2'))).toBeNull();
  });

  it('unlocks once failures leave the window', () => {
    const c = clock();
    const t = new LoginThrottle({ maxFailures: 2, windowSeconds: 10 }, c.now);
    t.recordFailure('bob', '1.1.1.1');
    t.recordFailure('bob', '1.1.1.1');
    expect(throttled(() => t.check('bob', '1.1.1.1'))).not.toBeNull();
    c.advance(10_001);
    expect(throttled(() => t.check('bob', '1.1.1.1'))).toBeNull();
  });

  it('a success clears the username counter but not the address counter', () => {
    const t = new LoginThrottle({ maxFailures: 2, windowSeconds: 60 }, clock().now);
    t.recordFailure('carol', '203.0.113.5');
    t.recordFailure('dave', '203.0.113.5');
    t.recordSuccess('carol');
    expect(throttled(() => t.check('carol', '203.0.113.6'))).toBeNull();
    expect(throttled(() => t.check('carol', '203.0.113.5'))?.status).toBe(429);
  });

  it('counts attempts from their start: places in flight are taken before any password is judged', () => {
    const t = new LoginThrottle({ maxFailures: 3, windowSeconds: 60 }, clock().now);
    const attempts = [t.begin('bob', '198.51.100.1'), t.begin('bob', '198.51.100.2'), t.begin('bob', '198.51.100.3')];
    expect(throttled(() => t.begin('bob', '198.51.100.4'))?.status).toBe(429);
    // Ending one frees its place; a success clears the username's failures as before.
    attempts[0]?.abandoned();
    const fourth = t.begin('bob', '198.51.100.4');
    attempts[1]?.failed();
    attempts[2]?.failed();
    fourth.succeeded();
    expect(throttled(() => t.begin('bob', '198.51.100.5'))).toBeNull();
  });

  it('locks after the failures of simultaneous attempts, and ends each attempt once', () => {
    const t = new LoginThrottle({ maxFailures: 2, windowSeconds: 60 }, clock().now);
    const a = t.begin('carol', '203.0.113.1');
    const b = t.begin('carol', '203.0.113.2');
    a.failed();
    a.failed(); // a second outcome for the same attempt changes nothing
    b.failed();
    expect(throttled(() => t.check('carol', '203.0.113.3'))?.status).toBe(429);
    const other = new LoginThrottle({ maxFailures: 2, windowSeconds: 60 }, clock().now);
    const only = other.begin('dave', '203.0.113.9');
    only.failed();
    only.failed();
    expect(throttled(() => other.check('dave', '203.0.113.8'))).toBeNull();
  });
});
