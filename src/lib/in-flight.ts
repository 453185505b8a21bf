import type { Deadline } from './deadline.js';

/**
 * Loads under way, by key: callers that ask for a key while its load is under way share that
 * load instead of each starting their own (when a cached entry expires under load, every request
 * that arrives before the answer would otherwise send its own query).
 *
 * An entry lives exactly as long as its load and no longer: once the load settles, either way, it
 * is dropped, so a failure is never handed to a later caller; and every load runs within
 * `deadline`, so one that never settles (an engine that stopped answering) is given up at the
 * deadline, for everyone sharing it, and dropped too. The next caller starts a fresh load.
 */
export class InFlight<K, V> {
  private readonly loads = new Map<K, Promise<V>>();

  constructor(private readonly deadline: Deadline) {}

  /** The load of `key` under way, or `load` started now (within the deadline) and shared until it settles. */
  share(key: K, load: (signal: AbortSignal) => Promise<V>): Promise<V> {
    const underWay = this.loads.get(key);
    if (underWay !== undefined) return underWay;
    const started = this.deadline(load).finally(() => {
      if (this.loads.get(key) === started) this.loads.delete(key);
    });
    this.loads.set(key, started);
    return started;
  }

  /** Later callers of `key` start a fresh load (after a change that the one under way may miss). */
  forget(key: K): void {
    this.loads.delete(key);
  }

  clear(): void {
    this.loads.clear();
  }
}
