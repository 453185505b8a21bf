/**
 * Slows password guessing: after `maxFailures` failed logins for one username, or from one
 * client address, within `windowSeconds`, further attempts (even correct ones) get 429 until the
 * oldest failure leaves the window. Applies to /auth/login/ and /token/.
 *
 * Attempts count from the moment they start (`begin`), not when their slow password check ends:
 * otherwise many simultaneous guesses would all pass the check before the first failure is
 * recorded. An attempt in flight holds one place under the limit until it ends.
 *
 * The counters live in this API process only: with several API processes behind a proxy each
 * keeps its own, so the effective limit is multiplied by the number of processes.
 */
import { tooManyRequests } from '../errors.js';

export interface ThrottleSettings {
  maxFailures: number;
  windowSeconds: number;
}

/** Bound on tracked keys, so a flood of made-up usernames cannot grow memory without limit. */
const MAX_TRACKED_KEYS = 50_000;
/** Usernames are stored capped: a megabyte-long "username" must not cost a megabyte. */
const MAX_KEY_LENGTH = 200;

/** One login attempt between `begin` and its outcome; each method may be called once. */
export interface LoginAttempt {
  failed(): void;
  succeeded(): void;
  /** Ended without an outcome (an error before the password was judged). */
  abandoned(): void;
}

export class LoginThrottle {
  /** key → failure timestamps (ms), oldest first */
  private readonly failures = new Map<string, number[]>();
  /** key → attempts started and not yet ended */
  private readonly inFlight = new Map<string, number>();

  constructor(
    private readonly settings: ThrottleSettings,
    private readonly now: () => number = Date.now,
  ) {}

  private keys(username: string, ip: string): string[] {
    return [`u:${username.toLowerCase().slice(0, MAX_KEY_LENGTH)}`, `ip:${ip}`];
  }

  private recent(key: string): number[] {
    const list = this.failures.get(key);
    if (list === undefined) return [];
    const cutoff = this.now() - this.settings.windowSeconds * 1000;
    while (list.length > 0 && (list[0] as number) <= cutoff) list.shift();
    if (list.length === 0) this.failures.delete(key);
    return list;
  }

  /** Throws 429 `throttled` (with Retry-After) when either the username or the address is locked. */
  check(username: string, ip: string): void {
    let retryAfterMs = 0;
    for (const key of this.keys(username, ip)) {
      const list = this.recent(key);
      const pending = this.inFlight.get(key) ?? 0;
      if (list.length >= this.settings.maxFailures) {
        const oldestRelevant = list[list.length - this.settings.maxFailures] as number;
        retryAfterMs = Math.max(retryAfterMs, oldestRelevant + this.settings.windowSeconds * 1000 - this.now());
      } else if (list.length + pending >= this.settings.maxFailures) {
        // Locked only while attempts are in flight: they end within seconds.
        retryAfterMs = Math.max(retryAfterMs, 1000);
      }
    }
    if (retryAfterMs > 0) {
      throw tooManyRequests('Too many failed login attempts. Try again later.', retryAfterMs / 1000);
    }
  }

  /** `check`, then holds a place for this attempt until the returned handle says how it ended. */
  begin(username: string, ip: string): LoginAttempt {
    this.check(username, ip);
    const keys = this.keys(username, ip);
    for (const key of keys) this.inFlight.set(key, (this.inFlight.get(key) ?? 0) + 1);
    let open = true;
    const end = (): boolean => {
      if (!open) return false;
      open = false;
      for (const key of keys) {
        const left = (this.inFlight.get(key) ?? 1) - 1;
        if (left > 0) this.inFlight.set(key, left);
        else this.inFlight.delete(key);
      }
      return true;
    };
    return {
      failed: () => {
        if (end()) this.recordFailure(username, ip);
      },
      succeeded: () => {
        if (end()) this.recordSuccess(username);
      },
      abandoned: () => {
        end();
      },
    };
  }

  recordFailure(username: string, ip: string): void {
    if (this.failures.size >= MAX_TRACKED_KEYS) this.prune();
    const t = this.now();
    for (const key of this.keys(username, ip)) {
      const list = this.recent(key);
      list.push(t);
      // Only the newest maxFailures timestamps decide anything.
      if (list.length > this.settings.maxFailures) list.splice(0, list.length - this.settings.maxFailures);
      this.failures.set(key, list);
    }
  }

  /**
   * A successful login clears the username's counter, not the address's: otherwise one valid
   * account would let an attacker reset the per-address limit at will.
   */
  recordSuccess(username: string): void {
    this.failures.delete(`u:${username.toLowerCase().slice(0, MAX_KEY_LENGTH)}`);
  }

  private prune(): void {
    for (const key of [...this.failures.keys()]) this.recent(key);
    // Still full of live entries: drop the oldest keys rather than grow without bound.
    const excess = this.failures.size - Math.floor(MAX_TRACKED_KEYS * 0.9);
    if (excess > 0) [...this.failures.keys()].slice(0, excess).forEach((k) => this.failures.delete(k));
  }
}
