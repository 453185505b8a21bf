/**
 * The workers as the Operations page lists them: liveness from their heartbeats (the metrics'
 * WorkerTracker, which applies Celery's rule: offline once twice the heartbeat interval has
 * passed without a heartbeat, or at once on `worker-offline`), load and software from the same
 * events, succeeded/failed counts from task events, and queues and concurrency from the
 * workers' answers to remote-control broadcasts (`active_queues`, `stats`).
 *
 * As many workers as the tracker keeps (WORKERS_TRACKED_MAX) are listed at most, and details
 * are kept only for those listed: made-up node names in a flood of events cost neither memory
 * nor a bigger page.
 */
import type { JsonValue } from '../../queue/protocol/json.js';
import { DEFAULT_TRACKED_WORKERS, WorkerTracker } from '../../queue/observe/worker-tracker.js';
import isPlainObject from 'is-plain-obj';

export interface OperationsWorker {
  node: string;
  online: boolean;
  queues: string[];
  /** The worker's pool size; null until it answered `stats`. */
  concurrency: number | null;
  /** Tasks running now, as of the last heartbeat. */
  active: number;
  /** Tasks finished since the worker started (its own count). */
  processed: number;
  /** Tasks that succeeded and failed on it since the API started listening (under the cluster: the longest-listening process). */
  succeeded: number;
  failed: number;
  /** 1, 5 and 15 minute load averages of its host; null when it sends none. */
  load: number[] | null;
  /** When its last event was heard (ISO time); null when only its control answers were. */
  lastHeartbeat: string | null;
  software: string | null;
}

/** What a worker answered to the remote-control broadcasts. */
export interface ControlFacts {
  queues: string[];
  concurrency: number | null;
}

interface Details {
  load: number[] | null;
  software: string | null;
  succeeded: number;
  failed: number;
}

function loadOf(value: unknown): number[] | null {
  return Array.isArray(value) && value.every((n) => typeof n === 'number') ? (value as number[]).slice(0, 3) : null;
}

/** The pool size from a `stats` answer. */
export function concurrencyOf(stats: JsonValue | undefined): number | null {
  if (!isPlainObject(stats) || !isPlainObject(stats.pool)) return null;
  const n = stats.pool['max-concurrency'];
  return typeof n === 'number' && Number.isFinite(n) ? n : null;
}

export class WorkerBoard {
  private readonly tracker: WorkerTracker;
  private readonly details = new Map<string, Details>();
  private control = new Map<string, ControlFacts>();

  constructor(private readonly capacity = DEFAULT_TRACKED_WORKERS) {
    this.tracker = new WorkerTracker(capacity);
  }

  /** A worker event; true when the worker was not known to be online before it. */
  observeWorker(event: { type: string; hostname: string; [key: string]: unknown }, now = Date.now()): boolean {
    const isNew = this.tracker.observe(event, now);
    const d = this.detailsOf(event.hostname);
    if (d !== undefined) {
      d.load = loadOf(event.loadavg) ?? d.load;
      if (typeof event.sw_ident === 'string')
        d.software = typeof event.sw_ver === 'string' ? `${event.sw_ident} ${event.sw_ver}` : event.sw_ident;
    }
    return isNew;
  }

  /** A task's final outcome on `node`; not counted for a node that is not listed. */
  countOutcome(node: string, outcome: 'succeeded' | 'failed'): void {
    const d = this.detailsOf(node);
    if (d !== undefined) d[outcome] += 1;
  }

  /** The answers of the last control broadcast (replaces the previous ones), as many as may be listed. */
  setControlFacts(facts: Map<string, ControlFacts>): void {
    this.control = new Map([...facts].slice(0, this.capacity));
  }

  /** Workers heard from recently or answering the last broadcast, sorted by name. */
  snapshot(now = Date.now()): OperationsWorker[] {
    const heard = new Map(this.tracker.snapshot(now).map((w) => [w.node, w]));
    this.forgetUnlisted();
    const nodes = [...new Set([...heard.keys(), ...this.control.keys()])].sort().slice(0, this.capacity);
    return nodes.map((node): OperationsWorker => {
      const h = heard.get(node);
      const c = this.control.get(node);
      const d = this.details.get(node);
      return {
        node,
        // Without a heartbeat yet (this process just started listening) its answer counts.
        online: h === undefined ? true : h.online,
        queues: c?.queues ?? [],
        concurrency: c?.concurrency ?? null,
        active: h?.active ?? 0,
        processed: h?.processed ?? 0,
        succeeded: d?.succeeded ?? 0,
        failed: d?.failed ?? 0,
        load: h?.online === true ? (d?.load ?? null) : null,
        lastHeartbeat: h === undefined ? null : new Date(h.lastSeen).toISOString(),
        software: d?.software ?? null,
      };
    });
  }

  /** The details of a listed node; those of nodes no longer listed are let go on the way. */
  private detailsOf(node: string): Details | undefined {
    let d = this.details.get(node);
    if (d === undefined) {
      if (!this.tracker.has(node) && !this.control.has(node)) return undefined;
      if (this.details.size >= this.tracker.size + this.control.size) this.forgetUnlisted();
      d = { load: null, software: null, succeeded: 0, failed: 0 };
      this.details.set(node, d);
    }
    return d;
  }

  private forgetUnlisted(): void {
    for (const node of this.details.keys()) if (!this.tracker.has(node) && !this.control.has(node)) this.details.delete(node);
  }
}
