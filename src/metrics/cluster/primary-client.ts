/**
 * An API process's side of a scrape under the cluster: answers the primary's requests for this
 * process's own metrics (from the registry of the metrics each process counts for itself), and
 * asks the primary for the aggregate of all processes, bounded by a timeout.
 */
import type { Registry } from 'prom-client';
import { ApiError } from '../../errors.js';
import {
  CLUSTER_METRICS_REQUEST,
  PROCESS_METRICS_ANSWER,
  isClusterMetricsAnswer,
  isProcessMetricsRequest,
  type ClusterMetricsRequest,
  type ProcessMetricsAnswer,
} from './messages.js';

export const ASK_TIMEOUT_MS = 5_000;

/** The IPC channel to the primary: `process` in a cluster worker. */
export interface PrimaryChannel {
  send?: (
    message: ClusterMetricsRequest | ProcessMetricsAnswer,
    sendHandle: undefined,
    options: undefined,
    callback: (error: Error | null) => void,
  ) => unknown;
  on(event: 'message', listener: (message: unknown) => void): unknown;
  off(event: 'message', listener: (message: unknown) => void): unknown;
}

const unavailable = (why: string): ApiError =>
  new ApiError(503, 'metrics_unavailable', `The metrics of the other API processes could not be read: ${why}.`);

export class PrimaryMetricsClient {
  private nextId = 0;
  private readonly pending = new Map<number, { resolve: (text: string) => void; reject: (err: Error) => void }>();
  private readonly onMessage = (message: unknown): void => {
    if (isProcessMetricsRequest(message)) {
      this.registry.getMetricsAsJSON().then(
        (metrics) => this.send({ type: PROCESS_METRICS_ANSWER, id: message.id, metrics }),
        (err: unknown) =>
          this.send({ type: PROCESS_METRICS_ANSWER, id: message.id, error: err instanceof Error ? err.message : String(err) }),
      );
    } else if (isClusterMetricsAnswer(message)) {
      const waiter = this.pending.get(message.id);
      if (waiter === undefined) return;
      if (message.text !== undefined) waiter.resolve(message.text);
      else waiter.reject(unavailable(message.error ?? 'no answer'));
    }
  };

  constructor(
    private readonly registry: Registry,
    private readonly channel: PrimaryChannel = process,
    private readonly timeoutMs = ASK_TIMEOUT_MS,
  ) {}

  start(): this {
    this.channel.on('message', this.onMessage);
    return this;
  }

  close(): void {
    this.channel.off('message', this.onMessage);
    for (const waiter of this.pending.values()) waiter.reject(unavailable('the process is shutting down'));
    this.pending.clear();
  }

  /** The metrics of all API processes, aggregated by the primary; an ApiError 503 if they do not come. */
  aggregate(): Promise<string> {
    const id = this.nextId++;
    return new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(unavailable(`no answer from the primary within ${this.timeoutMs} ms`));
      }, this.timeoutMs);
      const settle =
        <T>(fn: (value: T) => void) =>
        (value: T): void => {
          clearTimeout(timer);
          this.pending.delete(id);
          fn(value);
        };
      this.pending.set(id, { resolve: settle(resolve), reject: settle(reject) });
      this.send({ type: CLUSTER_METRICS_REQUEST, id });
    });
  }

  private send(message: ClusterMetricsRequest | ProcessMetricsAnswer): void {
    // With a callback, a channel that is gone (the primary is ending this process) reports to it
    // instead of raising an 'error' event nobody handles; the asker then times out.
    this.channel.send?.(message, undefined, undefined, () => undefined);
  }
}
