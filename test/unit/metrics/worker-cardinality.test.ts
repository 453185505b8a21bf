/**
 * A flood of heartbeats for made-up worker names: the workers tracked, the metric series and the
 * Operations page's rows stay at the cap, the oldest offline workers go first, and a burst of
 * scrapes shares one exposition.
 */
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { WorkerBoard } from '../../../src/admin/operations/worker-board.js';
import { SharedProbe } from '../../../src/metrics/shared-probe.js';
import { registerWorkerMetrics } from '../../../src/metrics/worker-collector.js';
import { DEFAULT_TRACKED_WORKERS, WorkerTracker } from '../../../src/queue/observe/worker-tracker.js';

const heartbeat = (hostname: string) => ({ type: 'worker-heartbeat', hostname, freq: 2, active: 1, processed: 1 });

/** Series of the per-worker metrics in a scrape of `registry`. */
async function workerSeries(registry: Registry): Promise<number> {
  const text = await registry.metrics();
  return text.split('\n').filter((line) => line.includes('{worker=')).length;
}

describe('workers tracked from their events', () => {
  it(`keeps ${DEFAULT_TRACKED_WORKERS} by default however many names a flood of heartbeats makes up`, async () => {
    const tracker = new WorkerTracker();
    const registry = new Registry();
    registerWorkerMetrics(registry, tracker);
    const now = Date.now();
    for (let i = 0; i < 33_000; i++) tracker.observe(heartbeat(`fake-${i}@flood`), now);
    expect(tracker.size).toBe(DEFAULT_TRACKED_WORKERS);
    expect(tracker.snapshot(now)).toHaveLength(DEFAULT_TRACKED_WORKERS);
    // worker_online for each tracked worker, worker_active_tasks for each online one.
    expect(await workerSeries(registry)).toBe(2 * DEFAULT_TRACKED_WORKERS);
  });

  it('lets the least recently heard offline worker go first, then the least recently heard of all', () => {
    const tracker = new WorkerTracker(3);
    tracker.observe(heartbeat('online-old'), 0);
    tracker.observe(heartbeat('gone'), 1_000);
    tracker.observe({ type: 'worker-offline', hostname: 'gone' }, 1_500);
    tracker.observe(heartbeat('online-old'), 2_000); // heard again: now the most recent
    tracker.observe(heartbeat('new-1'), 2_500);
    tracker.observe(heartbeat('new-2'), 2_700);
    // Full: the offline one went, though heard from after online-old was first heard.
    expect(tracker.snapshot(2_750).map((w) => w.node)).toEqual(['new-1', 'new-2', 'online-old']);
    tracker.observe(heartbeat('new-3'), 2_800);
    // All online: the one heard from least recently (online-old at 2 000) went.
    expect(tracker.snapshot(2_900).map((w) => w.node)).toEqual(['new-1', 'new-2', 'new-3']);
  });

  it('keeps a known worker through its own heartbeats at the cap', () => {
    const tracker = new WorkerTracker(2);
    tracker.observe(heartbeat('a'), 0);
    tracker.observe(heartbeat('b'), 0);
    for (let t = 1; t < 100; t++) tracker.observe(heartbeat('a'), t);
    expect(tracker.snapshot(100).map((w) => w.node)).toEqual(['a', 'b']);
  });
});

describe('the Operations board under a flood', () => {
  it('lists the cap at most and keeps details only of the workers it lists', () => {
    const board = new WorkerBoard(50);
    const now = Date.now();
    for (let i = 0; i < 5_000; i++) {
      board.observeWorker(heartbeat(`fake-${i}@flood`), now);
      board.countOutcome(`fake-${i}@flood`, 'succeeded');
      board.countOutcome(`never-heard-${i}`, 'failed');
    }
    board.setControlFacts(new Map(Array.from({ length: 500 }, (_, i) => [`answered-${i}`, { queues: ['celery'], concurrency: 1 }])));
    const rows = board.snapshot(now);
    expect(rows).toHaveLength(50);
    expect(rows.every((w) => w.failed === 0)).toBe(true);
    const details = (board as unknown as { details: Map<string, unknown> }).details;
    expect(details.size).toBeLessThanOrEqual(100);
  });
});

describe('a measurement shared for a while', () => {
  it('computes once for parallel callers and for callers within the reuse time, again after it', async () => {
    let computed = 0;
    const probe = new SharedProbe(async () => {
      computed++;
      await new Promise((resolve) => setTimeout(resolve, 20));
      return computed;
    }, 1_000);
    const answers = await Promise.all(Array.from({ length: 40 }, () => probe.run()));
    expect(new Set(answers)).toEqual(new Set([1]));
    expect(computed).toBe(1);
    expect(await probe.run(Date.now() + 500)).toBe(1);
    expect(await probe.run(Date.now() + 1_500)).toBe(2);
  });

  it('never hands out a failure after it came', async () => {
    let calls = 0;
    const probe = new SharedProbe(async () => {
      calls++;
      if (calls === 1) throw new Error('first fails');
      return calls;
    }, 1_000);
    await expect(probe.run()).rejects.toThrow('first fails');
    await new Promise((resolve) => setImmediate(resolve));
    expect(await probe.run()).toBe(2);
  });
});
