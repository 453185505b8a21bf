import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { HEARTBEAT_INTERVAL_S } from '../../../../src/queue/protocol/events.js';
import { Heart } from '../../../../src/worker/consumer/heart.js';

describe('the heart', () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  it('says worker-online once, beats every interval while started, and worker-offline at the end', () => {
    const sent: string[] = [];
    const heart = new Heart({ sendWorkerEvent: (type) => sent.push(type) > 0 }, () => ({ active: 0, processed: 0 }) as never);
    expect(heart.announcedOnline).toBe(false);
    heart.start();
    vi.advanceTimersByTime(HEARTBEAT_INTERVAL_S * 1000 * 2);
    // A reconnect starts it again: no second worker-online.
    heart.start();
    vi.advanceTimersByTime(HEARTBEAT_INTERVAL_S * 1000);
    heart.offline();
    vi.advanceTimersByTime(HEARTBEAT_INTERVAL_S * 1000 * 3);
    expect(sent).toEqual(['worker-online', 'worker-heartbeat', 'worker-heartbeat', 'worker-heartbeat', 'worker-offline']);
    expect(heart.announcedOnline).toBe(true);
  });
});
