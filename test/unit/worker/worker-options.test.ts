import { describe, expect, it } from 'vitest';
import { workerSettings, type WorkerOptions } from '../../../src/worker/worker-options.js';

const options: WorkerOptions = {
  nodeName: 'w@host',
  queues: ['celery'],
  tasks: [],
  broker: { url: 'amqps://broker', heartbeatSeconds: 10 },
  resultDatabase: 'cybercom',
  resultCollection: 'celery_taskmeta',
};

describe("the worker's settings", () => {
  it('default like Celery: one slot, prefetch four per slot, mingle on, events off', () => {
    expect(workerSettings(options)).toMatchObject({
      concurrency: 1,
      prefetchCount: 4,
      mingle: true,
      sendTaskEvents: false,
      trackStarted: false,
      shutdownGraceMs: 30_000,
      maxDeliveries: 5,
    });
  });

  it('size the prefetch window to the pool, 0 meaning unlimited, and keep counts at least 1', () => {
    expect(workerSettings({ ...options, concurrency: 3, prefetchMultiplier: 2 }).prefetchCount).toBe(6);
    expect(workerSettings({ ...options, concurrency: 3, prefetchMultiplier: 0 }).prefetchCount).toBe(0);
    expect(workerSettings({ ...options, concurrency: 0, maxDeliveries: 0 })).toMatchObject({ concurrency: 1, maxDeliveries: 1 });
  });
});
