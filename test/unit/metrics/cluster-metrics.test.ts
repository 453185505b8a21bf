/**
 * Metrics under the cluster, without processes: each API process answers with its own metrics
 * and the one that got the scrape aggregates them, over in-memory channels as over IPC.
 */
import { Gauge, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/errors.js';
import { ClusterPeer } from '../../../src/runtime/cluster/peer.js';
import { answerMetrics, gatherMetrics } from '../../../src/metrics/process-metrics.js';
import { PROCESS_WIDE, createCoreMetrics, type CoreMetrics } from '../../../src/metrics/registry.js';
import { memoryCluster, type MemoryProcess } from '../../support/memory-cluster.js';

/** A primary with `count` API processes, each answering with the metrics it counts. */
function cluster(count: number, options: { gatherTimeoutMs?: number; askTimeoutMs?: number } = {}) {
  const { processes, gatherer } = memoryCluster(count, options);
  const cores = processes.map((p) => {
    const core = createCoreMetrics();
    answerMetrics(p.peer, core.registry);
    return core;
  });
  const scrape = (p: MemoryProcess): Promise<string> => gatherMetrics(p.peer);
  return { processes, gatherer, cores, scrape };
}

/** The value of one sample line (`name{labels} value`) in the text format. */
function sample(text: string, line: string): number | undefined {
  const found = text.split('\n').find((l) => l.startsWith(`${line} `));
  return found === undefined ? undefined : Number(found.slice(line.length + 1));
}

describe('metrics of all API processes', () => {
  it('sums what each process counts, whichever process asks', async () => {
    const { processes, cores, scrape } = cluster(3);
    const [a, b, c] = cores as [CoreMetrics, CoreMetrics, CoreMetrics];
    const route = { route: '/api/x', method: 'GET', status: '200' };
    a.httpDuration.observe(route, 0.01);
    b.httpDuration.observe(route, 0.02);
    b.httpDuration.observe(route, 3);
    c.taskSubmissions.inc({ task: 't' }, 2);
    a.taskSubmissions.inc({ task: 't' });

    const answers = await Promise.all(processes.map(scrape));
    for (const text of answers) {
      expect(sample(text, 'cybercom_http_request_duration_seconds_count{route="/api/x",method="GET",status="200"}')).toBe(3);
      expect(sample(text, 'cybercom_http_request_duration_seconds_bucket{le="0.01",route="/api/x",method="GET",status="200"}')).toBe(1);
      expect(sample(text, 'cybercom_task_submissions_total{task="t"}')).toBe(3);
    }
    expect(new Set(answers.map((t) => t.replace(/^(process|nodejs)_.*$/gm, ''))).size).toBe(1);
  });

  it("reports the process's ArrayBuffers beside its external memory", async () => {
    const { processes, scrape } = cluster(1);
    const held = Buffer.alloc(32 * 1024 * 1024, 1);
    const text = await scrape(processes[0]!);
    const arrayBuffers = sample(text, 'nodejs_array_buffers_bytes') ?? 0;
    expect(arrayBuffers).toBeGreaterThanOrEqual(held.length);
    expect(arrayBuffers).toBeLessThanOrEqual(sample(text, 'nodejs_external_memory_bytes') ?? 0);
  });

  it('takes task events once: every process receives each of them', async () => {
    const { processes, cores, scrape } = cluster(2);
    const [a, b] = cores as [CoreMetrics, CoreMetrics];
    a.taskEvents.inc({ task: 't', state: 'SUCCESS' }, 5);
    // Started later: missed the first events.
    b.taskEvents.inc({ task: 't', state: 'SUCCESS' }, 3);
    const text = await scrape(processes[0]!);
    expect(sample(text, 'cybercom_task_events_total{task="t",state="SUCCESS"}')).toBe(5);
  });

  it("keeps prom-client's rules for the process metrics: one version line, no start time", async () => {
    const { processes, scrape } = cluster(2);
    const text = await scrape(processes[0]!);
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
    const { processes, gatherer, cores, scrape } = cluster(2, { gatherTimeoutMs: 60_000 });
    const [a, b] = processes as [MemoryProcess, MemoryProcess];
    cores[0]!.taskSubmissions.inc({ task: 't' });
    cores[1]!.taskSubmissions.inc({ task: 't' }, 10);
    b.alive = false;
    const asked = scrape(a);
    await new Promise((r) => setTimeout(r, 10));
    gatherer.gone(b);
    expect(sample(await asked, 'cybercom_task_submissions_total{task="t"}')).toBe(1);
  });

  it('fails with 503 when a process does not answer in time', async () => {
    const { processes, scrape } = cluster(2, { gatherTimeoutMs: 50 });
    const [a, b] = processes as [MemoryProcess, MemoryProcess];
    b.peer.close(); // still in the cluster, but no longer answers
    const failure = await scrape(a).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(ApiError);
    expect(failure).toMatchObject({ status: 503, code: 'metrics_unavailable' });
    expect((failure as Error).message).toContain('did not answer "metrics"');
  });

  it('fails with 503 when the primary does not answer in time', async () => {
    const lonely = new ClusterPeer({ send: () => undefined, on: () => undefined, off: () => undefined }, 50).start();
    await expect(gatherMetrics(lonely)).rejects.toMatchObject({ status: 503, code: 'metrics_unavailable' });
  });
});
