/**
 * Whether a request may start: revoked or expired ones are recorded REVOKED and acknowledged,
 * redeliveries of finished tasks acknowledged without running, messages started too often
 * parked (or, with no broker to park them on, returned), and a first delivery starts without a
 * write. The result store, the broker and the events are in-memory stand-ins.
 */
import type { ConsumeMessage } from 'amqplib';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { IncomingTask } from '../../../../src/queue/protocol/task-message-parser.js';
import type { DeliveryCount, ResultStore } from '../../../../src/queue/results/result-store.js';
import type { TaskState } from '../../../../src/queue/results/states.js';
import type { ChannelAcknowledgements, Settlement } from '../../../../src/worker/consumer/acknowledgements.js';
import { OutcomeRecorder } from '../../../../src/worker/request/outcome-recorder.js';
import { RequestOutcomes, type TaskReport } from '../../../../src/worker/request/request-outcomes.js';
import { RevokedSet } from '../../../../src/worker/revoked-set.js';
import { StartChecks, type StartRecords } from '../../../../src/worker/request/start-checks.js';
import { defineTask } from '../../../../src/worker/task-definition.js';
import { TaskRequest, requestMeta } from '../../../../src/worker/request/task-request.js';

const NODE = 'unit@test';
const silent = pino({ level: 'silent' });

class Rig {
  readonly log: string[] = [];
  readonly reports: TaskReport[] = [];
  readonly revoked = new RevokedSet();
  /** What the store answers. */
  finalState: TaskState | null = null;
  ready = false;
  /** Redeliveries the store has counted before this one (by any worker); the first delivery is never written. */
  counted = 0;

  private readonly records: StartRecords & Pick<ResultStore, 'markRevoked'> = {
    finalState: () => {
      this.log.push('read final state');
      return Promise.resolve(this.finalState);
    },
    isReady: () => {
      this.log.push('read ready');
      return Promise.resolve(this.ready);
    },
    countDelivery: (_id: string, _retries: number, _meta: unknown, _started: unknown, increment = 1): Promise<DeliveryCount> => {
      this.log.push(`count +${increment}`);
      return Promise.resolve({ count: this.counted + increment, finalState: null });
    },
    markRevoked: (_id: string, reason: string) => {
      this.log.push(`store REVOKED ${reason}`);
      return Promise.resolve();
    },
  };

  private readonly events = {
    taskEventsEnabled: true,
    sendTaskEvent: (type: string) => {
      this.log.push(`event ${type}`);
      return true;
    },
  };

  private readonly recorder = new OutcomeRecorder({
    store: () => this.records as unknown as ResultStore,
    logger: silent,
    graceOver: new AbortController().signal,
    deadlineMs: () => 0,
  });

  readonly checks = new StartChecks({
    nodeName: NODE,
    logger: silent,
    records: () => this.records,
    revoked: this.revoked,
    recorder: this.recorder,
    outcomes: new RequestOutcomes({
      nodeName: NODE,
      settings: { defaultQueue: 'celery' },
      logger: silent,
      recorder: this.recorder,
      forgetDeliveries: () => Promise.resolve(),
      events: this.events,
      publish: () => Promise.resolve(),
      report: (report) => void this.reports.push(report),
    }),
    events: this.events,
    connection: () => null,
    queueType: undefined,
    graceOver: new AbortController().signal,
    settings: { maxDeliveries: 2, trackStarted: false },
  });

  request(options: { redelivered?: boolean; expires?: Date } = {}): TaskRequest {
    const task = {
      taskId: 'task-1',
      taskName: 'tasks.add',
      retries: 0,
      args: [],
      kwargs: {},
      expires: options.expires ?? null,
      ignoreResult: false,
      deliveryInfo: { routingKey: 'tasks' },
    } as unknown as IncomingTask;
    const message = { fields: { deliveryTag: 1, redelivered: options.redelivered ?? false } } as ConsumeMessage;
    const acks = {
      settle: (_m: ConsumeMessage, how: Settlement) => void this.log.push(`settle ${how}`),
    } as unknown as ChannelAcknowledgements;
    return new TaskRequest({ message, acks }, task, defineTask({ name: 'tasks.add', run: () => null }));
  }

  mayStart(request: TaskRequest): Promise<boolean> {
    return this.checks.mayStart(request, requestMeta(request.task, NODE));
  }
}

describe('StartChecks', () => {
  it('a first delivery starts after one read of its final state, with no write', async () => {
    const rig = new Rig();
    expect(await rig.mayStart(rig.request())).toBe(true);
    expect(rig.log).toEqual(['read final state']);
  });

  it('a first delivery whose task already has a final state (revoked by the API) is acknowledged without running', async () => {
    const rig = new Rig();
    rig.finalState = 'REVOKED';
    expect(await rig.mayStart(rig.request())).toBe(false);
    expect(rig.log).toEqual(['read final state', 'event task-revoked', 'settle ack']);
    expect(rig.reports.map((r) => r.state)).toEqual(['REVOKED']);
  });

  it('a revoked request is recorded REVOKED and acknowledged, without reading anything', async () => {
    const rig = new Rig();
    rig.revoked.add('task-1');
    const request = rig.request();
    expect(rig.checks.revocation(request)).toBe('revoked');
    expect(await rig.mayStart(request)).toBe(false);
    expect(rig.log).toEqual(['store REVOKED revoked', 'event task-revoked', 'settle ack']);
  });

  it('an expired request is recorded REVOKED (expired)', async () => {
    const rig = new Rig();
    const request = rig.request({ expires: new Date(Date.now() - 1_000) });
    expect(rig.checks.revocation(request)).toBe('expired');
    expect(await rig.mayStart(request)).toBe(false);
    expect(rig.log[0]).toBe('store REVOKED expired');
  });

  it('a redelivery of a task that already finished is acknowledged without running again', async () => {
    const rig = new Rig();
    rig.ready = true;
    expect(await rig.mayStart(rig.request({ redelivered: true }))).toBe(false);
    expect(rig.log).toEqual(['read ready', 'settle ack']);
    expect(rig.reports.map((r) => r.state)).toEqual(['ALREADY_FINISHED']);
  });

  it('a redelivery is counted as a start, and runs up to the limit (its first delivery is a start too)', async () => {
    const rig = new Rig();
    rig.counted = 0;
    expect(await rig.mayStart(rig.request({ redelivered: true }))).toBe(true);
    expect(rig.log).toEqual(['read ready', 'count +1']);
  });

  it('past the limit the message is parked; with no broker to park it on, it goes back to its queue', async () => {
    const rig = new Rig();
    rig.counted = 1;
    expect(await rig.mayStart(rig.request({ redelivered: true }))).toBe(false);
    expect(rig.log).toEqual(['read ready', 'count +1', 'settle requeue']);
    expect(rig.reports.map((r) => r.state)).toEqual(['REQUEUED']);
  });
});
