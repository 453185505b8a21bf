/**
 * The primary's side of a scrape under the cluster: asks every API process that is ready for
 * its own metrics and aggregates the answers with prom-client (each metric by its `aggregator`:
 * counters and histograms summed). A process that ends before answering is left out rather than
 * waited for; one that does not answer in time fails the gather, so a scrape never hangs.
 */
import { AggregatorRegistry } from 'prom-client';
import { PROCESS_METRICS_REQUEST, type MetricsJson, type ProcessMetricsAnswer, type ProcessMetricsRequest } from './messages.js';

/** Below the API process's own wait, so it gets this error rather than a bare timeout. */
export const GATHER_TIMEOUT_MS = 4_000;

/** An API process as the primary sees it: node:cluster's Worker fits. */
export interface MetricsPeer {
  readonly id: number;
  send(message: ProcessMetricsRequest, sendHandle: undefined, callback: (error: Error | null) => void): unknown;
}

interface Gather {
  waiting: Set<number>;
  answers: MetricsJson[];
  settle: (result: { metrics: MetricsJson[] } | { error: Error }) => void;
}

export class MetricsGatherer {
  private nextId = 0;
  private readonly gathers = new Map<number, Gather>();

  constructor(
    private readonly peers: () => readonly MetricsPeer[],
    private readonly timeoutMs = GATHER_TIMEOUT_MS,
  ) {}

  /** The metrics of every ready API process, aggregated, in the Prometheus text format. */
  async gather(): Promise<string> {
    const answers = await this.collect();
    return AggregatorRegistry.aggregate(answers).metrics();
  }

  /** An API process answered. */
  answered(peer: MetricsPeer, message: ProcessMetricsAnswer): void {
    const gather = this.gathers.get(message.id);
    if (gather === undefined || !gather.waiting.delete(peer.id)) return;
    if (message.error !== undefined || message.metrics === undefined) {
      gather.settle({ error: new Error(`API process ${peer.id} could not read its metrics: ${message.error ?? 'no metrics'}`) });
      return;
    }
    gather.answers.push(message.metrics);
    if (gather.waiting.size === 0) gather.settle({ metrics: gather.answers });
  }

  /** An API process ended: its answer will not come, and what it counted is gone with it. */
  gone(peer: MetricsPeer): void {
    for (const gather of [...this.gathers.values()]) {
      if (gather.waiting.delete(peer.id) && gather.waiting.size === 0) gather.settle({ metrics: gather.answers });
    }
  }

  private collect(): Promise<MetricsJson[]> {
    const id = this.nextId++;
    const peers = this.peers();
    return new Promise<MetricsJson[]>((resolve, reject) => {
      const timer = setTimeout(
        () => gather.settle({ error: new Error(`API processes did not send their metrics within ${this.timeoutMs} ms`) }),
        this.timeoutMs,
      );
      const gather: Gather = {
        waiting: new Set(peers.map((p) => p.id)),
        answers: [],
        settle: (result) => {
          if (!this.gathers.delete(id)) return;
          clearTimeout(timer);
          if ('error' in result) reject(result.error);
          else resolve(result.metrics);
        },
      };
      this.gathers.set(id, gather);
      for (const peer of peers) {
        // A channel that closed as the process ends reports to the callback rather than as an
        // unhandled 'error' event; the exit that follows (or the timeout) settles the gather.
        peer.send({ type: PROCESS_METRICS_REQUEST, id }, undefined, () => undefined);
      }
      if (gather.waiting.size === 0) gather.settle({ metrics: [] });
    });
  }
}
