import { describe, expect, it } from 'vitest';
import {
  AUTHENTICATED_USER_HEADER,
  buildTaskMessage,
  encodeTaskBody,
  taskPublishOptions,
} from '../../../src/queue/protocol/task-message.js';
import { fieldTable } from '../../../src/queue/protocol/amqp-table.js';

const TASK_ID = '9c7d4a1e-0b2f-4c33-9a52-3b8f4a3e6f11';

describe('buildTaskMessage', () => {
  // The §1.4 example: what Celery 5.2.6's app.send_task('proj.tasks.add', args=[2, 2]) publishes.
  const message = buildTaskMessage({
    taskName: 'proj.tasks.add',
    taskId: TASK_ID,
    args: [2, 2],
    origin: 'gen4242@client-host',
    replyTo: 'd3a5f0f6-7a51-3d58-a1c4-2f0f3c7e0b9a',
  });

  it('sets every protocol header as Celery 5.2.6 does, in the same order', () => {
    expect(Object.keys(message.headers)).toEqual([
      'lang',
      'task',
      'id',
      'shadow',
      'eta',
      'expires',
      'group',
      'group_index',
      'retries',
      'timelimit',
      'root_id',
      'parent_id',
      'argsrepr',
      'kwargsrepr',
      'origin',
      'ignore_result',
      AUTHENTICATED_USER_HEADER,
    ]);
    expect(message.headers.lang).toBe('py');
    expect(message.headers.task).toBe('proj.tasks.add');
    expect(message.headers.id).toBe(TASK_ID);
    expect(message.headers.shadow).toBeNull();
    expect(message.headers.eta).toBeNull();
    expect(message.headers.expires).toBeNull();
    expect(message.headers.group).toBeNull();
    expect(message.headers.group_index).toBeNull();
    expect(message.headers.retries).toBe(0);
    expect(message.headers.timelimit).toEqual([null, null]);
    expect(message.headers.root_id).toBe(TASK_ID);
    expect(message.headers.parent_id).toBeNull();
    expect(message.headers.argsrepr).toBe('[2, 2]');
    expect(message.headers.kwargsrepr).toBe('{}');
    expect(message.headers.origin).toBe('gen4242@client-host');
    expect(message.headers.ignore_result).toBe(false);
    expect(message.headers.authenticated_user).toBeNull();
  });

  it('sets the AMQP properties of the example', () => {
    const options = taskPublishOptions(message);
    expect(options).toEqual({
      contentType: 'application/json',
      contentEncoding: 'utf-8',
      correlationId: TASK_ID,
      replyTo: 'd3a5f0f6-7a51-3d58-a1c4-2f0f3c7e0b9a',
      deliveryMode: 2,
      priority: 0,
      headers: fieldTable(message.headers),
    });
    expect(options.expiration).toBeUndefined();
  });

  it('sends the three-element body with all four embed keys', () => {
    expect(JSON.parse(encodeTaskBody(message).toString('utf8'))).toEqual([
      [2, 2],
      {},
      { callbacks: null, errbacks: null, chain: null, chord: null },
    ]);
  });

  it('generates a UUID task id and a gen<pid>@host origin by default', () => {
    const m = buildTaskMessage({ taskName: 'tasks.noop' });
    expect(m.headers.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(m.properties.correlationId).toBe(m.headers.id);
    expect(m.headers.origin).toMatch(new RegExp(`^gen${process.pid}@.+`));
  });

  it('carries the authenticated user, time limits [hard, soft], kwargs repr and extra headers', () => {
    const m = buildTaskMessage({
      taskName: 'tasks.whoami',
      kwargs: { name: "O'Brien", flag: true, none: null },
      authenticatedUser: 'alice',
      timeLimit: { hard: 30, soft: 20 },
      extraHeaders: { tenant: 'lab', task: 'evil.override' },
    });
    expect(m.headers.authenticated_user).toBe('alice');
    expect(m.headers.timelimit).toEqual([30, 20]);
    expect(m.headers.kwargsrepr).toBe(`{'name': "O'Brien", 'flag': True, 'none': None}`);
    expect(m.headers.tenant).toBe('lab');
    // Custom headers cannot replace protocol headers.
    expect(m.headers.task).toBe('tasks.whoami');
  });

  it('writes eta/expires with six fraction digits and an offset, and mirrors expires as a ms TTL', () => {
    const now = new Date(Date.UTC(2024, 5, 19, 19, 23, 24, 611));
    const m = buildTaskMessage({
      taskName: 'tasks.add',
      eta: new Date(now.getTime() + 5_000),
      expires: new Date(now.getTime() + 60_000),
      now,
    });
    expect(m.headers.eta).toBe('2024-06-19T19:23:29.611000+00:00');
    expect(m.headers.expires).toBe('2024-06-19T19:24:24.611000+00:00');
    expect(m.properties.expiration).toBe('60000');
    expect(taskPublishOptions(m).expiration).toBe('60000');
  });

  it('clamps a past expiry to a zero TTL', () => {
    const now = new Date();
    const m = buildTaskMessage({ taskName: 'tasks.add', expires: new Date(now.getTime() - 1_000), now });
    expect(m.properties.expiration).toBe('0');
  });
});
