import { describe, expect, it } from 'vitest';
import type { IncomingTask } from '../../../src/queue/protocol/task-message-parser.js';
import { exceptionRepr } from '../../../src/queue/results/exceptions.js';
import { requestInfo, workerStats } from '../../../src/worker/inspection.js';

describe('inspection replies', () => {
  it('stats describe the broker without its password', () => {
    const stats = workerStats({
      processedByTask: new Map([
        ['tasks.add', 3],
        ['tasks.noop', 1],
      ]),
      clock: 9,
      concurrency: 2,
      prefetchCount: 8,
      defaultTimeLimitSeconds: null,
      broker: { url: 'amqps://mq.example:5671/lab', username: 'cybercom', password: 's3cret', heartbeatSeconds: 30 },
      brokerConnected: true,
    });
    expect(stats).toMatchObject({
      total: { 'tasks.add': 3, 'tasks.noop': 1 },
      pid: process.pid,
      clock: '9',
      pool: { 'max-concurrency': 2, writes: { total: 4 } },
      broker: { hostname: 'mq.example', userid: 'cybercom', virtual_host: 'lab', port: 5671, transport: 'amqp', ssl: true },
      prefetch_count: 8,
    });
    expect(JSON.stringify(stats)).not.toContain('s3cret');
  });

  it('request info has Celery’s keys', () => {
    const task = {
      taskId: 'id',
      taskName: 'tasks.add',
      args: [1],
      kwargs: {},
      deliveryInfo: { exchange: '', routingKey: 'celery', redelivered: false, priority: 0 },
    } as unknown as IncomingTask;
    expect(Object.keys(requestInfo(task, new Date(1_000), 'ts@h')).sort()).toEqual([
      'acknowledged',
      'args',
      'delivery_info',
      'hostname',
      'id',
      'kwargs',
      'name',
      'time_start',
      'type',
      'worker_pid',
    ]);
  });

  it('exception repr reads like Python', () => {
    expect(exceptionRepr({ exc_type: 'ValueError', exc_message: ['bad input'], exc_module: 'builtins' })).toBe("ValueError('bad input')");
    expect(exceptionRepr({ exc_type: 'TimeLimitExceeded', exc_message: [5], exc_module: 'billiard.exceptions' })).toBe(
      'TimeLimitExceeded(5)',
    );
  });
});
