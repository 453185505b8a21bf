/**
 * The worker's memory of revoked task ids, like Celery's `worker_state.revoked` LimitedSet:
 * bounded at 50 000 ids, dropping the oldest beyond that, and forgetting ids after 3 hours.
 */

export const REVOKES_MAX = 50_000;
export const REVOKE_EXPIRES_MS = 3 * 60 * 60 * 1000;

export class RevokedSet {
  /** id → revocation time (epoch ms), insertion ordered. */
  private readonly entries = new Map<string, number>();

  constructor(
    private readonly maxSize = REVOKES_MAX,
    private readonly expiresMs = REVOKE_EXPIRES_MS,
  ) {}

  add(id: string, at = Date.now()): void {
    this.entries.delete(id);
    this.entries.set(id, at);
    this.purge(Date.now());
  }

  has(id: string): boolean {
    const at = this.entries.get(id);
    if (at === undefined) return false;
    if (Date.now() - at > this.expiresMs) {
      this.entries.delete(id);
      return false;
    }
    return true;
  }

  get size(): number {
    return this.entries.size;
  }

  ids(): string[] {
    return [...this.entries.keys()];
  }

  /**
   * The `hello` (mingle) payload: `{id: epoch seconds}`. Python's LimitedSet.update insists on
   * float timestamps, and JSON writes a whole number as an int, so avoid whole numbers.
   */
  toHelloPayload(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [id, at] of this.entries) {
      const seconds = at / 1000;
      out[id] = Number.isInteger(seconds) ? seconds + 0.0001 : seconds;
    }
    return out;
  }

  /** Merges a peer's `hello` payload (values: seconds, or `[seconds, ...]` from a LimitedSet). */
  mergeHelloPayload(payload: unknown): void {
    if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return;
    for (const [id, raw] of Object.entries(payload)) {
      const seconds = Array.isArray(raw) ? raw[0] : raw;
      if (typeof seconds === 'number' && !this.entries.has(id)) this.add(id, seconds * 1000);
    }
  }

  /** Entries are in insertion order, so the oldest come first. */
  private purge(now: number): void {
    for (const [id, at] of this.entries) {
      if (this.entries.size <= this.maxSize && now - at <= this.expiresMs) break;
      this.entries.delete(id);
    }
  }
}
