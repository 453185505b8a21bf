import { describe, expect, it } from 'vitest';
import { MaxRetriesExceededError, Retry, requestRetry } from '../../../../src/worker/request/task-retry.js';

const request = { taskId: 't1', taskName: 'lab.add', retries: 0, args: [1], kwargs: {} };
const policy = { maxRetries: 3, defaultRetryDelaySeconds: 180 };
const now = new Date(Date.UTC(2026, 0, 1));

function thrown(run: () => never): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('did not throw');
}

describe("a task's own retry", () => {
  it('asks to run again after the default delay, a countdown or at an eta, with new arguments when given', () => {
    const later = thrown(() => requestRetry(request, policy, {}, now)) as Retry;
    expect(later).toBeInstanceOf(Retry);
    expect(later.when.getTime() - now.getTime()).toBe(180_000);
    expect(later.nextArgs).toEqual([1]);
    const soon = thrown(() => requestRetry(request, policy, { countdown: 5, args: [2], kwargs: { x: 1 } }, now)) as Retry;
    expect(soon.when.getTime() - now.getTime()).toBe(5_000);
    expect([soon.nextArgs, soon.nextKwargs]).toEqual([[2], { x: 1 }]);
    const eta = new Date(Date.UTC(2026, 0, 2));
    expect((thrown(() => requestRetry(request, policy, { eta, countdown: 5 }, now)) as Retry).when).toEqual(eta);
  });

  it('past max retries fails with the reason given, else MaxRetriesExceededError; null retries without limit', () => {
    const last = { ...request, retries: 3 };
    const reason = new Error('flaky');
    expect(thrown(() => requestRetry(last, policy, { exc: reason }, now))).toBe(reason);
    const exceeded = thrown(() => requestRetry(last, policy, {}, now));
    expect(exceeded).toBeInstanceOf(MaxRetriesExceededError);
    expect((exceeded as Error).message).toContain("Can't retry lab.add[t1] args:(1,) kwargs:{}");
    expect(thrown(() => requestRetry({ ...request, retries: 99 }, { ...policy, maxRetries: null }, {}, now))).toBeInstanceOf(Retry);
  });
});
