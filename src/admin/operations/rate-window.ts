/**
 * Events per second by key over a sliding window (one-second buckets), e.g. tasks published to
 * each queue. Keys not seen within the window are dropped.
 */
const BUCKET_MS = 1_000;

export class RateWindow {
  /** key → (second → count) */
  private readonly counts = new Map<string, Map<number, number>>();

  constructor(private readonly windowSeconds = 60) {}

  add(key: string, at = Date.now()): void {
    const second = Math.floor(at / BUCKET_MS);
    let perSecond = this.counts.get(key);
    if (perSecond === undefined) {
      perSecond = new Map();
      this.counts.set(key, perSecond);
    }
    perSecond.set(second, (perSecond.get(second) ?? 0) + 1);
    this.prune(perSecond, second);
  }

  /** Average events per second over the window ending now. */
  rate(key: string, now = Date.now()): number {
    const perSecond = this.counts.get(key);
    if (perSecond === undefined) return 0;
    const second = Math.floor(now / BUCKET_MS);
    this.prune(perSecond, second);
    if (perSecond.size === 0) {
      this.counts.delete(key);
      return 0;
    }
    let total = 0;
    for (const n of perSecond.values()) total += n;
    return total / this.windowSeconds;
  }

  /** The rate of every key seen within the window. */
  rates(now = Date.now()): Record<string, number> {
    const out: Record<string, number> = {};
    for (const key of [...this.counts.keys()]) {
      const rate = this.rate(key, now);
      if (rate > 0) out[key] = rate;
    }
    return out;
  }

  private prune(perSecond: Map<number, number>, second: number): void {
    for (const s of perSecond.keys()) if (s <= second - this.windowSeconds) perSecond.delete(s);
  }
}
