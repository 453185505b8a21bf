/** The pool's slots: at most `concurrency` bodies at once, in arrival order, released once each. */
import { describe, expect, it } from 'vitest';
import { Pool } from '../../../src/worker/pool.js';

describe('Pool', () => {
  it('starts at most `concurrency` items and the next one when a slot is released', () => {
    const releases = new Map<string, () => void>();
    const started: string[] = [];
    const pool = new Pool<string>(2, (item, release) => {
      started.push(item);
      releases.set(item, release);
    });
    for (const item of ['a', 'b', 'c', 'd']) pool.submit(item);
    expect(started).toEqual(['a', 'b']);
    expect(pool.running).toBe(2);
    expect(pool.queued).toBe(2);
    releases.get('a')!();
    releases.get('a')!(); // a second release of the same slot frees nothing more
    expect(started).toEqual(['a', 'b', 'c']);
    expect(pool.running).toBe(2);
  });

  it('a closed pool starts nothing; waiting items can be taken back', () => {
    const started: number[] = [];
    const releases: Array<() => void> = [];
    const pool = new Pool<number>(1, (item, release) => {
      started.push(item);
      releases.push(release);
    });
    pool.submit(1);
    pool.submit(2);
    pool.submit(3);
    pool.close();
    releases[0]!();
    expect(started).toEqual([1]);
    expect(pool.takeWaiting()).toEqual([2, 3]);
    expect(pool.queued).toBe(0);
  });

  it('an item released synchronously lets the next start in the same call', () => {
    const started: number[] = [];
    const pool = new Pool<number>(1, (item, release) => {
      started.push(item);
      release();
    });
    pool.submit(1);
    pool.submit(2);
    expect(started).toEqual([1, 2]);
    expect(pool.running).toBe(0);
  });

  it('refuses a concurrency below 1', () => {
    expect(() => new Pool(0, () => undefined)).toThrow(RangeError);
  });
});
