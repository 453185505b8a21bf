/**
 * Which workers are online, from their Celery worker events. Celery's rule: a worker is alive
 * until twice its heartbeat interval (the event's `freq`, 2 s by default) has passed since its
 * last heartbeat; `worker-offline` ends it at once. Times are this process's receive times, so
 * a worker whose clock is off is not declared dead.
 *
 * Workers gone for a while are forgotten, so a cluster whose node names change (containers
 * named after their id) does not keep a series per name it ever had. And at most `capacity`
 * workers are kept at all (WORKERS_TRACKED_MAX): anyone holding the workers' broker credentials
 * can send heartbeats for made-up names, and every name tracked is a metric series and a row on
 * the Operations page. Past the cap the worker heard from least recently among those offline
 * goes first, then the one heard from least recently of all.
 */
export interface WorkerState {
  node: string;
  online: boolean;
  /** Tasks running now, as of the last heartbeat. */
  active: number;
  /** Tasks finished since the worker started. */
  processed: number;
  /** Receive time of the last worker event (ms since the epoch). */
  lastSeen: number;
}

export interface WorkerEvent {
  type: string;
  hostname: string;
  freq?: unknown;
  active?: unknown;
  processed?: unknown;
}

/** Celery's HEARTBEAT_EXPIRE_WINDOW: 200 % of the interval. */
const EXPIRE_FACTOR = 2;
const DEFAULT_FREQ_S = 2;
export const FORGET_AFTER_MS = 10 * 60 * 1000;
/** WORKERS_TRACKED_MAX's default. */
export const DEFAULT_TRACKED_WORKERS = 1000;

interface Entry {
  active: number;
  processed: number;
  lastSeen: number;
  expiresAt: number;
}

const count = (value: unknown, fallback: number): number =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : fallback;

export class WorkerTracker {
  /** Ordered by the last event heard: the least recently heard come first. */
  private readonly workers = new Map<string, Entry>();

  constructor(readonly capacity = DEFAULT_TRACKED_WORKERS) {}

  /** Records a worker event; true when the worker was not known to be online before it. */
  observe(event: WorkerEvent, now = Date.now()): boolean {
    const previous = this.workers.get(event.hostname);
    const wasOnline = previous !== undefined && now < previous.expiresAt;
    const freq = count(event.freq, DEFAULT_FREQ_S) || DEFAULT_FREQ_S;
    const offline = event.type === 'worker-offline';
    this.workers.delete(event.hostname);
    if (previous === undefined) this.makeRoom(now);
    this.workers.set(event.hostname, {
      active: offline ? 0 : count(event.active, previous?.active ?? 0),
      processed: count(event.processed, previous?.processed ?? 0),
      lastSeen: now,
      expiresAt: offline ? now : now + freq * EXPIRE_FACTOR * 1000,
    });
    return !offline && !wasOnline;
  }

  /** Whether `node` is among the workers tracked. */
  has(node: string): boolean {
    return this.workers.has(node);
  }

  get size(): number {
    return this.workers.size;
  }

  /** Every worker seen recently, sorted by name. */
  snapshot(now = Date.now()): WorkerState[] {
    const out: WorkerState[] = [];
    for (const [node, entry] of this.workers) {
      if (now - entry.lastSeen > FORGET_AFTER_MS) {
        this.workers.delete(node);
        continue;
      }
      const online = now < entry.expiresAt;
      out.push({ node, online, active: online ? entry.active : 0, processed: entry.processed, lastSeen: entry.lastSeen });
    }
    return out.sort((a, b) => a.node.localeCompare(b.node));
  }

  /** Frees a place for one more worker when all are taken (see the module comment). */
  private makeRoom(now: number): void {
    if (this.workers.size < this.capacity) return;
    let evict: string | undefined;
    for (const [node, entry] of this.workers) {
      if (entry.expiresAt <= now) {
        evict = node;
        break;
      }
    }
    evict ??= this.workers.keys().next().value;
    if (evict !== undefined) this.workers.delete(evict);
  }
}
