import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { WorkerConfigError, loadWorkerConfig } from '../../../src/worker/config.js';

const base = { MONGO_URI: 'mongodb://db:27017', BROKER_URL: 'amqps://mq:5671/vhost' };

describe('loadWorkerConfig', () => {
  it('applies the documented defaults', () => {
    const config = loadWorkerConfig(base);
    expect(config).toMatchObject({
      nodeName: `ts-worker@${hostname()}`,
      queues: ['celery'],
      prefetchMultiplier: 4,
      taskModules: [],
      resultDatabase: 'cybercom',
      resultCollection: 'tombstone',
      trackStarted: false,
      sendTaskEvents: false,
      shutdownGraceMs: 30_000,
      defaultTimeLimitSeconds: null,
    });
    expect(config.concurrency).toBeGreaterThanOrEqual(1);
    expect(config.broker.url).toBe('amqps://mq:5671/vhost');
    expect(config.mongo.uri).toBe('mongodb://db:27017');
  });

  it('reads every worker variable', () => {
    const config = loadWorkerConfig({
      ...base,
      WORKER_NODE_NAME: 'w1@box',
      WORKER_QUEUES: 'a, b,,c',
      WORKER_CONCURRENCY: '3',
      WORKER_PREFETCH_MULTIPLIER: '0',
      WORKER_TASK_MODULES: './tasks.ts,@acme/tasks',
      RESULT_DATABASE: 'results',
      RESULT_COLLECTION: 'celery_taskmeta',
      WORKER_TRACK_STARTED: 'no',
      WORKER_SEND_TASK_EVENTS: 'TRUE',
      WORKER_SHUTDOWN_GRACE_S: '2.5',
      WORKER_DEFAULT_TIME_LIMIT_S: '60',
      WORKER_MAX_DELIVERIES: '3',
      WORKER_UNRELATED: 'ignored',
    });
    expect(config).toMatchObject({
      nodeName: 'w1@box',
      queues: ['a', 'b', 'c'],
      concurrency: 3,
      prefetchMultiplier: 0,
      taskModules: ['./tasks.ts', '@acme/tasks'],
      resultDatabase: 'results',
      resultCollection: 'celery_taskmeta',
      trackStarted: false,
      sendTaskEvents: true,
      shutdownGraceMs: 2_500,
      defaultTimeLimitSeconds: 60,
      maxDeliveries: 3,
    });
  });

  it('treats empty variables as unset', () => {
    expect(loadWorkerConfig({ ...base, WORKER_QUEUES: '', WORKER_CONCURRENCY: '' }).queues).toEqual(['celery']);
  });

  it('lists every problem at once', () => {
    try {
      loadWorkerConfig({
        MONGO_URI: 'http://x',
        WORKER_CONCURRENCY: 'zero',
        WORKER_NODE_NAME: 'no-at-sign',
        WORKER_TRACK_STARTED: 'maybe',
      });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(WorkerConfigError);
      const text = (error as WorkerConfigError).message;
      for (const name of ['MONGO_URI', 'BROKER_URL', 'WORKER_CONCURRENCY', 'WORKER_NODE_NAME', 'WORKER_TRACK_STARTED'])
        expect(text).toContain(name);
    }
  });
});
