/**
 * Metrics under the cluster: every API process answers the question "metrics" with what it counts
 * itself (prom-client JSON), and the process that got the scrape aggregates the answers of all
 * of them with prom-client (each metric by its `aggregator`: counters and histograms summed).
 */
import { AggregatorRegistry, type MetricObjectWithValues, type MetricValue, type Registry } from 'prom-client';
import { unavailable } from '../errors.js';
import type { ClusterPeer } from '../runtime/cluster/peer.js';

const METRICS_TOPIC = 'metrics';
type MetricsJson = MetricObjectWithValues<MetricValue<string>>[];

/** Answers the other processes' scrapes with the metrics of `registry`. */
export function answerMetrics(peers: ClusterPeer, registry: Registry): void {
  peers.answer(METRICS_TOPIC, () => registry.getMetricsAsJSON());
}

/** The metrics of all API processes, aggregated, in the text format; an ApiError 503 if they do not come. */
export async function gatherMetrics(peers: ClusterPeer): Promise<string> {
  const answers = await peers.gather(METRICS_TOPIC).catch((err: unknown) => {
    const why = err instanceof Error ? err.message : String(err);
    throw unavailable(`The metrics of the other API processes could not be read: ${why}.`, 'metrics_unavailable');
  });
  return AggregatorRegistry.aggregate(answers as MetricsJson[]).metrics();
}
