import { describe, expect, it } from 'vitest';
import { FORGET_AFTER_MS, WorkerTracker } from '../../../../src/queue/observe/worker-tracker.js';

describe('worker liveness from heartbeats', () => {
  it('is online until twice the heartbeat interval has passed', () => {
    const tracker = new WorkerTracker();
    expect(tracker.observe({ type: 'worker-heartbeat', hostname: 'w1', freq: 2, active: 3, processed: 10 }, 1_000)).toBe(true);
    expect(tracker.observe({ type: 'worker-heartbeat', hostname: 'w1', freq: 2, active: 1, processed: 11 }, 3_000)).toBe(false);
    expect(tracker.snapshot(6_999)).toEqual([{ node: 'w1', online: true, active: 1, processed: 11, lastSeen: 3_000 }]);
    expect(tracker.snapshot(7_000)[0]).toMatchObject({ online: false, active: 0 });
    // Back after being gone: new again (the receiver then re-enables its task events).
    expect(tracker.observe({ type: 'worker-heartbeat', hostname: 'w1', freq: 2 }, 8_000)).toBe(true);
  });

  it('goes offline at once on worker-offline and is forgotten later', () => {
    const tracker = new WorkerTracker();
    tracker.observe({ type: 'worker-online', hostname: 'w2', freq: 5 }, 0);
    tracker.observe({ type: 'worker-offline', hostname: 'w2' }, 1_000);
    expect(tracker.snapshot(1_001)[0]).toMatchObject({ node: 'w2', online: false });
    expect(tracker.snapshot(1_000 + FORGET_AFTER_MS + 1)).toEqual([]);
  });
});
