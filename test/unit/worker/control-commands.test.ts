import { describe, expect, it } from 'vitest';
import { ControlCommandError, runControlCommand, type ControlTarget } from '../../../src/worker/control-commands.js';
import { RevokedSet } from '../../../src/worker/revoked-set.js';
import { defineTask } from '../../../src/worker/task-definition.js';
import { TaskRegistry } from '../../../src/worker/task-registry.js';

function target(running: string[] = []): ControlTarget & { revokedSet: RevokedSet; heartbeats: number } {
  const registry = new TaskRegistry([
    defineTask({
      name: 'tasks.add',
      doc: 'Add two numbers.',
      parameters: [
        { name: 'x', annotation: 'number' },
        { name: 'y', annotation: 'number', default: 0 },
        { name: 'note', kind: 'keyword_only' },
      ],
      run: () => 0,
    }),
    defineTask({ name: 'tasks.noop', run: () => null }),
  ]);
  const revokedSet = new RevokedSet();
  let clock = 0;
  return {
    revokedSet,
    heartbeats: 0,
    nodeName: 'ts@host',
    queues: ['celery', 'other'],
    registeredReply: (items) => registry.registeredReply(items),
    taskInfoReply: () => registry.taskInfoReply(),
    revoke(ids, terminate) {
      ids.forEach((id) => revokedSet.add(id));
      return terminate ? ids.filter((id) => running.includes(id)) : [];
    },
    revokedIds: () => revokedSet.ids(),
    helloPayload: () => revokedSet.toHelloPayload(),
    mergeRevoked: (payload) => revokedSet.mergeHelloPayload(payload),
    activeRequests: () => [],
    stats: () => ({ pid: 1 }),
    sendHeartbeat() {
      this.heartbeats += 1;
    },
    taskEventsEnabled: false,
    clock: () => ++clock,
    adjustClock: (peer: number) => {
      clock = Math.max(clock, peer) + 1;
    },
  };
}

describe('remote-control commands', () => {
  it('ping → {"ok": "pong"}', () => {
    expect(runControlCommand(target(), 'ping', {})).toEqual({ ok: 'pong' });
  });

  it('cybercom_task_info answers docs and declared signatures', () => {
    expect(runControlCommand(target(), 'cybercom_task_info', {})).toEqual({
      version: 1,
      tasks: {
        'tasks.add': {
          doc: 'Add two numbers.',
          signature: {
            text: '(x: number, y: number = 0, /, *, note)',
            parameters: [
              { name: 'x', kind: 'positional_only', annotation: 'number' },
              { name: 'y', kind: 'positional_only', default: 0, annotation: 'number' },
              { name: 'note', kind: 'keyword_only' },
            ],
          },
        },
        'tasks.noop': { doc: null, signature: null },
      },
    });
  });

  it('registered honours taskinfoitems and defaults to Celery’s items', () => {
    expect(runControlCommand(target(), 'registered', { taskinfoitems: ['__doc__'] })).toEqual([
      'tasks.add [__doc__=Add two numbers.]',
      'tasks.noop',
    ]);
    expect(runControlCommand(target(), 'registered', {})).toEqual(['tasks.add', 'tasks.noop']);
    expect(runControlCommand(target(), 'dump_tasks', { taskinfoitems: ['__doc__'] })).toHaveLength(2);
  });

  it('active_queues lists kombu Queue.as_dict objects', () => {
    const queues = runControlCommand(target(), 'active_queues', {}) as Record<string, unknown>[];
    expect(queues.map((q) => q.name)).toEqual(['celery', 'other']);
    expect(queues[0]).toMatchObject({
      name: 'celery',
      exchange: { name: 'celery', type: 'direct', durable: true, auto_delete: false },
      routing_key: 'celery',
      durable: true,
      exclusive: false,
      auto_delete: false,
      no_ack: false,
      queue_arguments: null,
      bindings: [],
    });
  });

  it('revoke flags ids and replies like Celery; terminate names the running ones', () => {
    const t = target(['b']);
    expect(runControlCommand(t, 'revoke', { task_id: 'a', terminate: false, signal: 'SIGTERM' })).toEqual({
      ok: 'tasks a flagged as revoked',
    });
    expect(runControlCommand(t, 'revoke', { task_id: ['b', 'c'], terminate: true, signal: 'SIGTERM' })).toEqual({ ok: 'terminate: b' });
    expect(runControlCommand(t, 'revoke', { task_id: ['d'], terminate: true })).toEqual({ ok: 'terminate: tasks unknown' });
    expect(t.revokedSet.ids()).toEqual(['a', 'b', 'c', 'd']);
    expect(runControlCommand(t, 'revoked', {})).toEqual(['a', 'b', 'c', 'd']);
  });

  it('hello answers peers with revoked ids as float seconds, merges theirs, and ignores itself', () => {
    const t = target();
    const theirs = Date.now() / 1000 - 0.25;
    t.revokedSet.add('mine', Math.floor(Date.now() / 1000) * 1000);
    expect(runControlCommand(t, 'hello', { from_node: 'ts@host', revoked: {} })).toBeNull();
    const reply = runControlCommand(t, 'hello', { from_node: 'celery@py', revoked: { theirs } }) as Record<string, unknown>;
    const revoked = reply.revoked as Record<string, number>;
    expect(Object.keys(revoked).sort()).toEqual(['mine', 'theirs']);
    expect(revoked.theirs).toBeCloseTo(theirs, 3);
    expect(Number.isInteger(revoked.mine)).toBe(false);
    expect(typeof reply.clock).toBe('number');
  });

  it('enable_events / disable_events toggle task events with Celery’s replies', () => {
    const t = target();
    expect(runControlCommand(t, 'enable_events', {})).toEqual({ ok: 'task events enabled' });
    expect(runControlCommand(t, 'enable_events', {})).toEqual({ ok: 'task events already enabled' });
    expect(t.taskEventsEnabled).toBe(true);
    expect(runControlCommand(t, 'disable_events', {})).toEqual({ ok: 'task events disabled' });
    expect(runControlCommand(t, 'disable_events', {})).toEqual({ ok: 'task events already disabled' });
  });

  it('heartbeat triggers a heartbeat event and replies null', () => {
    const t = target();
    expect(runControlCommand(t, 'heartbeat', {})).toBeNull();
    expect(t.heartbeats).toBe(1);
  });

  it("unknown commands raise KeyError('name') like kombu", () => {
    expect(() => runControlCommand(target(), 'shutdown', {})).toThrow(ControlCommandError);
    try {
      runControlCommand(target(), 'frobnicate', {});
    } catch (error) {
      expect((error as ControlCommandError).reply).toBe("KeyError('frobnicate')");
    }
    expect(() => runControlCommand(target(), 'toString', {})).toThrow(ControlCommandError);
  });
});
