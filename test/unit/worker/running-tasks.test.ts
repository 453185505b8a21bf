import { describe, expect, it, vi } from 'vitest';
import { RunningTasks } from '../../../src/worker/running-tasks.js';
import { WorkerShutdown } from '../../../src/worker/request/task-execution.js';
import type { TaskRequest } from '../../../src/worker/request/task-request.js';

function entry(running: RunningTasks, taskId: string) {
  const stop = vi.fn((_reason: unknown) => running.remove(taskId));
  running.add({ request: { taskId } as TaskRequest, execution: { stop } as never, startedAt: new Date() });
  return stop;
}

describe('the running tasks', () => {
  it('finish within the grace period without being stopped', async () => {
    const running = new RunningTasks();
    const stop = entry(running, 'a');
    const abandon = vi.fn();
    setTimeout(() => running.remove('a'), 5);
    await running.finishWithin(1_000, abandon);
    expect(abandon).not.toHaveBeenCalled();
    expect(stop).not.toHaveBeenCalled();
    expect(running.size).toBe(0);
  });

  it('past the grace period: are named, stopped with WorkerShutdown, and waited for', async () => {
    const running = new RunningTasks();
    const stops = [entry(running, 'a'), entry(running, 'b')];
    const abandon = vi.fn();
    await running.finishWithin(10, abandon);
    expect(abandon).toHaveBeenCalledWith(['a', 'b']);
    for (const stop of stops) expect(stop.mock.calls[0]?.[0]).toBeInstanceOf(WorkerShutdown);
    expect(running.size).toBe(0);
  });

  it('resolve at once when none runs', async () => {
    await expect(new RunningTasks().finishWithin(60_000, () => undefined)).resolves.toBeUndefined();
  });
});
