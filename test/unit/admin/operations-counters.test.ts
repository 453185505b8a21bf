/**
 * The Operations page's in-memory counters: outcomes per minute over the last hour, per-second
 * rates over the last minute, and the worker list's liveness rule (Celery's: offline after twice
 * the heartbeat interval without a heartbeat, or at once on worker-offline).
 */
import { describe, expect, it } from 'vitest';
import { MinuteCounts } from '../../../src/admin/operations/minute-counts.js';
import { RateWindow } from '../../../src/admin/operations/rate-window.js';
import { WorkerBoard } from '../../../src/admin/operations/worker-board.js';

const MINUTE = 60_000;
const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);

describe('MinuteCounts', () => {
  it('reports sixty minutes, oldest first, with the counts of each', () => {
    const counts = new MinuteCounts();
    counts.add('succeeded', T0 + 5_000);
    counts.add('succeeded', T0 + 59_000);
    counts.add('failed', T0 + 30_000);
    counts.add('failed', T0 + MINUTE + 1);
    const series = counts.series(T0 + MINUTE + 10);
    expect(series).toHaveLength(60);
    expect(series[59]).toEqual({ minute: T0 + MINUTE, succeeded: 0, failed: 1 });
    expect(series[58]).toEqual({ minute: T0, succeeded: 2, failed: 1 });
    expect(series[0]?.minute).toBe(T0 + MINUTE - 59 * MINUTE);
  });

  it('forgets minutes older than an hour, also when their slot is reused', () => {
    const counts = new MinuteCounts();
    counts.add('failed', T0);
    expect(counts.series(T0 + 59 * MINUTE).reduce((n, m) => n + m.failed, 0)).toBe(1);
    expect(counts.series(T0 + 60 * MINUTE).reduce((n, m) => n + m.failed, 0)).toBe(0);
    counts.add('succeeded', T0 + 60 * MINUTE);
    // A late count for the minute an hour ago no longer fits anywhere.
    counts.add('failed', T0);
    const series = counts.series(T0 + 60 * MINUTE);
    expect(series[59]).toEqual({ minute: T0 + 60 * MINUTE, succeeded: 1, failed: 0 });
    expect(series.reduce((n, m) => n + m.failed, 0)).toBe(0);
  });
});

describe('RateWindow', () => {
  it('averages events per second over the last minute, per key', () => {
    const rates = new RateWindow(60);
    for (let i = 0; i < 30; i++) rates.add('q1', T0 + i * 1000);
    rates.add('q2', T0);
    expect(rates.rate('q1', T0 + 30_000)).toBeCloseTo(0.5);
    expect(rates.rate('q2', T0 + 30_000)).toBeCloseTo(1 / 60);
    // A minute later only the events of the last 60 seconds count.
    expect(rates.rate('q1', T0 + 75_000)).toBeCloseTo(14 / 60);
    expect(rates.rate('q2', T0 + 75_000)).toBe(0);
    expect(rates.rate('unknown', T0)).toBe(0);
  });
});

describe('WorkerBoard', () => {
  const heartbeat = (hostname: string, extra: Record<string, unknown> = {}) => ({
    type: 'worker-heartbeat',
    hostname,
    freq: 2,
    active: 1,
    processed: 9,
    loadavg: [1, 2, 3],
    ...extra,
  });

  it('is online until twice the heartbeat interval has passed without one', () => {
    const board = new WorkerBoard();
    expect(board.observeWorker(heartbeat('w1@h'), T0)).toBe(true);
    expect(board.observeWorker(heartbeat('w1@h'), T0 + 2_000)).toBe(false);
    expect(board.snapshot(T0 + 5_999)[0]).toMatchObject({ node: 'w1@h', online: true, active: 1, processed: 9, load: [1, 2, 3] });
    expect(board.snapshot(T0 + 6_000)[0]).toMatchObject({
      node: 'w1@h',
      online: false,
      active: 0,
      load: null,
      lastHeartbeat: new Date(T0 + 2_000).toISOString(),
    });
  });

  it('is offline at once after worker-offline, and counts outcomes per worker', () => {
    const board = new WorkerBoard();
    board.observeWorker(heartbeat('w2@h'), T0);
    board.countOutcome('w2@h', 'failed');
    board.countOutcome('w2@h', 'succeeded');
    board.countOutcome('w2@h', 'succeeded');
    board.observeWorker({ type: 'worker-offline', hostname: 'w2@h' }, T0 + 100);
    expect(board.snapshot(T0 + 200)[0]).toMatchObject({ online: false, succeeded: 2, failed: 1 });
  });

  it('adds queues and pool size from control answers, and lists a worker that only answered', () => {
    const board = new WorkerBoard();
    board.observeWorker(heartbeat('w3@h'), T0);
    board.setControlFacts(
      new Map([
        ['w3@h', { queues: ['celery'], concurrency: 4 }],
        ['w4@h', { queues: ['other'], concurrency: null }],
      ]),
    );
    const [w3, w4] = board.snapshot(T0 + 1_000);
    expect(w3).toMatchObject({ node: 'w3@h', queues: ['celery'], concurrency: 4, online: true });
    expect(w4).toMatchObject({ node: 'w4@h', queues: ['other'], concurrency: null, online: true, lastHeartbeat: null });
  });
});
