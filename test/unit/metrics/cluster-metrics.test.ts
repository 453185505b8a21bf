/**
 * Metrics under the cluster, without processes: the primary's gatherer and the API processes'
 * client talk over in-memory channels exactly as they do over IPC.
 */
import { EventEmitter } from 'node:events';
import { Gauge, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/errors.js';
import { MetricsGatherer, type MetricsPeer } from '../../../src/metrics/cluster/gatherer.js';
import { isClusterMetricsRequest, isProcessMetricsAnswer } from '../../../src/metrics/cluster/messages.js';
import { PrimaryMetricsClient, type PrimaryChannel } from '../../../src/metrics/cluster/primary-client.js';
import { PROCESS_WIDE, createCoreMetrics, type CoreMetrics } from '../../../src/metrics/registry.js';

/** One API process: its IPC channel seen from both ends, its metrics and its client. */
class FakeProcess implements MetricsPeer {
  readonly toProcess = new EventEmitter();
  readonly core: CoreMetrics = createCoreMetrics();
  readonly client: PrimaryMetricsClient;
  /** Messages the process sent to the primary. */
  readonly sent: unknown[] = [];
  alive = true;

  constructor(
    readonly id: number,
    onSend: (from: FakeProcess, message: unknown) => void,
    timeoutMs?: number,
  ) {
    const channel: PrimaryChannel = {
      send: (message) => {
        this.sent.push(message);
        if (this.alive) queueMicrotask(() => onSend(this, message));
      },
      on: (event, listener) => this.toProcess.on(event, listener),
      off: (event, listener) => this.toProcess.off(event, listener),
    };
    this.client = new PrimaryMetricsClient(this.core.registry, channel, timeoutMs).start();
  }

  send(message: unknown): void {
    if (this.alive) queueMicrotask(() => this.toProcess.emit('message', message));
  }
}

/** A primary with `count` API processes, wired as primary.ts wires them. */
function cluster(count: number, options: { gatherTimeoutMs?: number; askTimeoutMs?: number } = {}) {
  const processes: FakeProcess[] = [];
  const gatherer = new MetricsGatherer(() => processes.filter((p) => p.alive), options.gatherTimeoutMs);
  const onSend = (from: FakeProcess, message: unknown): void => {
    if (isProcessMetricsAnswer(message)) gatherer.answered(from, message);
    if (isClusterMetricsRequest(message)) {
      gatherer.gather().then(
        (text) => from.send({ type: 'cybercom:cluster-metrics-answer', id: message.id, text }),
        (err: Error) => from.send({ type: 'cybercom:cluster-metrics-answer', id: message.id, error: err.message }),
      );
    }
  };
  for (let i = 0; i < count; i++) processes.push(new FakeProcess(i + 1, onSend, options.askTimeoutMs));
  return { processes, gatherer };
}

/** The value of one sample line (`name{labels} value`) in the text format. */
function sample(text: string, line: string): number | undefined {
  const found = text.split('\n').find((l) => l.startsWith(`${line} `));
  return found === undefined ? undefined : Number(found.slice(line.length + 1));
}

describe('metrics of all API processes', () => {
  it('sums what each process counts, whichever process asks', async () => {
    const { processes } = cluster(3);
    const [a, b, c] = processes as [FakeProcess, FakeProcess, FakeProcess];
    const route = { route: '/api/x', method: 'GET', status: '200' };
    a.core.httpDuration.observe(route, 0.01);
    b.core.httpDuration.observe(route, 0.02);
    b.core.httpDuration.observe(route, 3);
    c.core.taskSubmissions.inc({ task: 't' }, 2);
    a.core.taskSubmissions.inc({ task: 't' });

    const answers = await Promise.all(processes.map((p) => p.client.aggregate()));
    for (const text of answers) {
      expect(sample(text, 'cybercom_http_request_duration_seconds_count{route="/api/x",method="GET",status="200"}')).toBe(3);
      expect(sample(text, 'cybercom_http_request_duration_seconds_bucket{le="0.01",route="/api/x",method="GET",status="200"}')).toBe(1);
      expect(sample(text, 'cybercom_task_submissions_total{task="t"}')).toBe(3);
    }
    expect(new Set(answers.map((t) => t.replace(/^(process|nodejs)_.*$/gm, ''))).size).toBe(1);
  });

  it('takes task events once: every process receives each of them', async () => {
    const { processes } = cluster(2);
    const [a, b] = processes as [FakeProcess, FakeProcess];
    a.core.taskEvents.inc({ task: 't', state: 'SUCCESS' }, 5);
    // Started later: missed the first events.
    b.core.taskEvents.inc({ task: 't', state: 'SUCCESS' }, 3);
    const text = await a.client.aggregate();
    expect(sample(text, 'cybercom_task_events_total{task="t",state="SUCCESS"}')).toBe(5);
  });

  it("keeps prom-client's rules for the process metrics: one version line, no start time", async () => {
    const { processes } = cluster(2);
    const text = await processes[0]!.client.aggregate();
    expect(text.match(/^nodejs_version_info\{/gm)).toHaveLength(1);
    expect(text).not.toMatch(/^process_start_time_seconds /m);
    expect(sample(text, 'process_cpu_seconds_total')).toBeGreaterThan(0);
  });

  it('does not sum a gauge of shared state should it be aggregated', async () => {
    const registries = [new Registry(), new Registry()];
    for (const registry of registries) {
      new Gauge({ name: 'up', help: 'up', registers: [registry], aggregator: PROCESS_WIDE }).set(1);
    }
    const { AggregatorRegistry } = await import('prom-client');
    const text = await AggregatorRegistry.aggregate(await Promise.all(registries.map((r) => r.getMetricsAsJSON()))).metrics();
    expect(sample(text, 'up')).toBe(1);
  });

  it('leaves out a process that ends before answering instead of waiting for it', async () => {
    const { processes, gatherer } = cluster(2, { gatherTimeoutMs: 60_000 });
    const [a, b] = processes as [FakeProcess, FakeProcess];
    a.core.taskSubmissions.inc({ task: 't' });
    b.core.taskSubmissions.inc({ task: 't' }, 10);
    b.alive = false;
    const asked = a.client.aggregate();
    await new Promise((r) => setTimeout(r, 10));
    gatherer.gone(b);
    expect(sample(await asked, 'cybercom_task_submissions_total{task="t"}')).toBe(1);
  });

  it('fails with 503 when a process does not answer in time', async () => {
    const { processes } = cluster(2, { gatherTimeoutMs: 50 });
    const [a, b] = processes as [FakeProcess, FakeProcess];
    b.client.close(); // still in the cluster, but no longer answers
    const failure = await a.client.aggregate().catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(ApiError);
    expect(failure).toMatchObject({ status: 503, code: 'metrics_unavailable' });
    expect((failure as Error).message).toContain('did not send their metrics');
  });

  it('fails with 503 when the primary does not answer in time', async () => {
    const lonely = new PrimaryMetricsClient(new Registry(), { send: () => undefined, on: () => undefined, off: () => undefined }, 50);
    await expect(lonely.aggregate()).rejects.toMatchObject({ status: 503, code: 'metrics_unavailable' });
  });
});
