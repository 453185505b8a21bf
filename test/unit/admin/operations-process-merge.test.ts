/**
 * The Operations page under the cluster: the answering process merges what every API process's
 * monitor counted (summed rates, per-minute and per-worker largest counts), here over in-memory
 * channels as over IPC.
 */
import { describe, expect, it } from 'vitest';
import {
  OPERATIONS_TOPIC,
  gatherProcessOperations,
  isProcessOperations,
  mergeProcesses,
  mergeWorkers,
} from '../../../src/admin/operations/process-merge.js';
import { ApiError } from '../../../src/errors.js';
import type { ClusterView, ProcessOperations } from '../../../src/admin/operations/views.js';
import type { OperationsWorker } from '../../../src/admin/operations/worker-board.js';
import { memoryCluster } from '../../support/memory-cluster.js';

const MINUTE = 60_000;
const T0 = 1_000 * MINUTE;

function worker(node: string, fields: Partial<OperationsWorker> = {}): OperationsWorker {
  return {
    node,
    online: true,
    queues: [],
    concurrency: null,
    active: 0,
    processed: 0,
    succeeded: 0,
    failed: 0,
    load: null,
    lastHeartbeat: null,
    software: null,
    ...fields,
  };
}

function minutes(counts: [number, number][]): ProcessOperations['minutes'] {
  return counts.map(([succeeded, failed], i) => ({ minute: T0 + i * MINUTE, succeeded, failed }));
}

function view(fields: Partial<ClusterView> = {}): ClusterView {
  return {
    workers: [],
    queues: [
      { name: 'celery', messages: 3, consumers: 1, publishRate: 0.5, deliverRate: 0.25 },
      { name: 'slow', messages: 0, consumers: 0, publishRate: 0, deliverRate: 0 },
    ],
    running: [],
    minutes: minutes([
      [1, 0],
      [2, 0],
      [0, 0],
    ]),
    listeningSince: new Date(T0 + 2 * MINUTE).toISOString(),
    ...fields,
  };
}

function process(fields: Partial<ProcessOperations> = {}): ProcessOperations {
  return {
    publishRates: {},
    deliverRates: {},
    minutes: [],
    workers: [],
    listeningSince: new Date(T0 + 2 * MINUTE).toISOString(),
    ...fields,
  };
}

describe('merging the Operations data of all API processes', () => {
  it('sums the queue rates: each process counts only the tasks it submitted', () => {
    const merged = mergeProcesses(view(), [
      process({ publishRates: { celery: 0.5 }, deliverRates: { celery: 0.25 } }),
      process({ publishRates: { celery: 1, other: 7 }, deliverRates: { celery: 1 } }),
    ]);
    expect(merged.queues).toEqual([
      { name: 'celery', messages: 3, consumers: 1, publishRate: 1.5, deliverRate: 1.25 },
      { name: 'slow', messages: 0, consumers: 0, publishRate: 0, deliverRate: 0 },
    ]);
  });

  it('takes the largest count of each minute, not the sum: every process sees every event', () => {
    const own = view();
    const merged = mergeProcesses(own, [
      process({ minutes: own.minutes }),
      // Started earlier: it has counted more of the first minute; the last one it has alike.
      process({
        minutes: minutes([
          [4, 1],
          [2, 0],
          [0, 0],
        ]),
        listeningSince: new Date(T0).toISOString(),
      }),
      // A minute outside the answering process's hour is not added.
      process({ minutes: [{ minute: T0 - MINUTE, succeeded: 9, failed: 9 }] }),
    ]);
    expect(merged.minutes).toEqual(
      minutes([
        [4, 1],
        [2, 0],
        [0, 0],
      ]),
    );
    expect(merged.listeningSince).toBe(new Date(T0).toISOString());
  });

  it('lists every worker once, with its largest counts, freshest heartbeat, and queues from whoever has them', () => {
    const early = new Date(T0).toISOString();
    const late = new Date(T0 + 2_000).toISOString();
    const merged = mergeWorkers([
      [worker('w1', { queues: ['celery'], concurrency: 4, lastHeartbeat: early, active: 1, succeeded: 2 })],
      [worker('w1', { lastHeartbeat: late, active: 3, succeeded: 5, failed: 1 }), worker('w0', { lastHeartbeat: late })],
      [worker('w1', { lastHeartbeat: null, succeeded: 0 })],
    ]);
    expect(merged.map((w) => w.node)).toEqual(['w0', 'w1']);
    expect(merged[1]).toEqual(
      worker('w1', { queues: ['celery'], concurrency: 4, lastHeartbeat: late, active: 3, succeeded: 5, failed: 1 }),
    );
  });

  it("keeps the answering process's own entry when no other heard the worker more recently", () => {
    const at = new Date(T0).toISOString();
    const merged = mergeWorkers([[worker('w', { lastHeartbeat: at, online: false })], [worker('w', { lastHeartbeat: at, online: true })]]);
    expect(merged[0]?.online).toBe(false);
  });

  it('merges what the processes answer over the cluster, whichever process asks', async () => {
    const { processes } = memoryCluster(2);
    const own = [process({ publishRates: { celery: 0.25 } }), process({ publishRates: { celery: 0.5 } })];
    processes.forEach((p, i) => p.peer.answer(OPERATIONS_TOPIC, () => Promise.resolve(own[i])));
    for (const p of processes) {
      expect(mergeProcesses(view(), await gatherProcessOperations(p.peer)).queues[0]?.publishRate).toBe(0.75);
    }
  });

  it('fails with 503 when a process does not answer in time or answers in another shape', async () => {
    const { processes } = memoryCluster(2, { gatherTimeoutMs: 50 });
    const [a, b] = processes;
    a?.peer.answer(OPERATIONS_TOPIC, () => Promise.resolve(process()));
    b?.peer.answer(OPERATIONS_TOPIC, () => new Promise(() => undefined));
    const late = await gatherProcessOperations(a!.peer).catch((err: unknown) => err);
    expect(late).toBeInstanceOf(ApiError);
    expect(late).toMatchObject({ status: 503, code: 'operations_unavailable' });
    b?.peer.answer(OPERATIONS_TOPIC, () => Promise.resolve({ publishRates: 1 }));
    await expect(gatherProcessOperations(a!.peer)).rejects.toMatchObject({
      status: 503,
      message: expect.stringContaining('unknown shape'),
    });
  });

  it('recognises an answer of the wrong shape', () => {
    expect(isProcessOperations(process())).toBe(true);
    expect(isProcessOperations({ publishRates: {} })).toBe(false);
    expect(isProcessOperations(null)).toBe(false);
  });
});
