/**
 * The IPC messages behind a scrape under the cluster. The API process that got the scrape asks
 * the primary for the aggregate; the primary asks every API process for its own metrics, sums
 * them up and answers the one that asked.
 */
import type { MetricObjectWithValues, MetricValue } from 'prom-client';

export type MetricsJson = MetricObjectWithValues<MetricValue<string>>[];

/** API process → primary: "the metrics of all processes, please". */
export const CLUSTER_METRICS_REQUEST = 'cybercom:cluster-metrics-request';
/** Primary → the API process that asked: the aggregate in the text format, or why there is none. */
export const CLUSTER_METRICS_ANSWER = 'cybercom:cluster-metrics-answer';
/** Primary → every API process: "your own metrics, please". */
export const PROCESS_METRICS_REQUEST = 'cybercom:process-metrics-request';
/** API process → primary: its own metrics as prom-client JSON. */
export const PROCESS_METRICS_ANSWER = 'cybercom:process-metrics-answer';

export interface ClusterMetricsRequest {
  type: typeof CLUSTER_METRICS_REQUEST;
  id: number;
}
export interface ClusterMetricsAnswer {
  type: typeof CLUSTER_METRICS_ANSWER;
  id: number;
  text?: string;
  error?: string;
}
export interface ProcessMetricsRequest {
  type: typeof PROCESS_METRICS_REQUEST;
  id: number;
}
export interface ProcessMetricsAnswer {
  type: typeof PROCESS_METRICS_ANSWER;
  id: number;
  metrics?: MetricsJson;
  error?: string;
}

function typed<T extends { type: string }>(type: T['type']) {
  return (message: unknown): message is T =>
    typeof message === 'object' &&
    message !== null &&
    (message as { type?: unknown }).type === type &&
    typeof (message as { id?: unknown }).id === 'number';
}

export const isClusterMetricsRequest = typed<ClusterMetricsRequest>(CLUSTER_METRICS_REQUEST);
export const isClusterMetricsAnswer = typed<ClusterMetricsAnswer>(CLUSTER_METRICS_ANSWER);
export const isProcessMetricsRequest = typed<ProcessMetricsRequest>(PROCESS_METRICS_REQUEST);
export const isProcessMetricsAnswer = typed<ProcessMetricsAnswer>(PROCESS_METRICS_ANSWER);
