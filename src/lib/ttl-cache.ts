/**
 * A small in-process cache with a fixed time-to-live and a size cap. Used to keep repeated
 * lookups off the database for a second or two (tokens, sessions, that a collection exists);
 * entries are also dropped explicitly when the underlying record changes in this process.
 */
export class TtlCache<K, V> {
  private readonly entries = new Map<K, { value: V; expires: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  get(key: K): V | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expires <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  /** `expires` (a `now()` time) shortens the entry's life below the TTL, e.g. to a lease's end. */
  set(key: K, value: V, expires = this.now() + this.ttlMs): void {
    this.entries.delete(key);
    if (this.ttlMs <= 0 || expires <= this.now()) return;
    if (this.entries.size >= this.maxEntries) {
      // Maps iterate in insertion order: the first key is the oldest entry.
      const oldest = this.entries.keys().next();
      if (oldest.done !== true) this.entries.delete(oldest.value);
    }
    this.entries.set(key, { value, expires: Math.min(expires, this.now() + this.ttlMs) });
  }

  delete(key: K): void {
    this.entries.delete(key);
  }

  /** Drops every entry whose value matches (e.g. all tokens of one user). */
  deleteWhere(predicate: (value: V, key: K) => boolean): void {
    for (const [key, entry] of this.entries) if (predicate(entry.value, key)) this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}
