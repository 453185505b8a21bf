import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { EtaSchedule } from '../../../src/worker/eta-schedule.js';
import type { TaskRequest } from '../../../src/worker/request/task-request.js';

function request(eta: Date, log: string[]): TaskRequest {
  return {
    task: { eta },
    holdForEta: () => log.push('hold'),
    releaseHold: () => log.push('release'),
    requeue: () => log.push('requeue'),
  } as unknown as TaskRequest;
}

describe('the ETA schedule', () => {
  beforeEach(() => void vi.useFakeTimers({ now: 0 }));
  afterEach(() => void vi.useRealTimers());

  it('hands a request to the pool when due, and checks the time again when woken early', () => {
    const log: string[] = [];
    const due: TaskRequest[] = [];
    const eta = new EtaSchedule((r) => due.push(r));
    const held = request(new Date(5_000), log);
    eta.hold(held, 2_000); // asked to wake before the ETA: it holds again for the rest
    vi.advanceTimersByTime(2_000);
    expect(due).toEqual([]);
    vi.advanceTimersByTime(3_000);
    expect(due).toEqual([held]);
    expect(log).toEqual(['hold', 'hold', 'release']);
  });

  it('returns every held message on shutdown and forgets them when the connection is lost', () => {
    const log: string[] = [];
    const due: TaskRequest[] = [];
    const eta = new EtaSchedule((r) => due.push(r));
    eta.hold(request(new Date(1_000), log), 1_000);
    eta.returnAll();
    eta.hold(request(new Date(1_000), log), 1_000);
    eta.forget();
    vi.advanceTimersByTime(5_000);
    expect(due).toEqual([]);
    expect(log).toEqual(['hold', 'requeue', 'hold']);
  });
});
