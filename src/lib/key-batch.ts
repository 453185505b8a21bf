/**
 * Gathers the keys asked for within a short window into one lookup, as DataLoader batches (without
 * its cache: every call reads afresh). Callers that ask at nearly the same moment share one round
 * trip: a thousand requests polling a thousand keys cost one query per window instead of a
 * thousand.
 */
export class KeyBatch<K, V> {
  private open: { keys: Set<K>; result: Promise<Map<K, V>> } | undefined;

  constructor(
    /** Answers every key it knows; a key missing from the map is answered undefined. */
    private readonly lookup: (keys: K[]) => Promise<Map<K, V>>,
    /** How long a batch stays open for more keys after its first. */
    private readonly windowMs: number,
    /** A batch that reaches this many keys is closed; later keys go to a new one. */
    private readonly maxKeys = 1_000,
  ) {}

  get(key: K): Promise<V | undefined> {
    const batch = this.open !== undefined && this.open.keys.size < this.maxKeys ? this.open : this.start();
    batch.keys.add(key);
    return batch.result.then((values) => values.get(key));
  }

  private start(): { keys: Set<K>; result: Promise<Map<K, V>> } {
    const keys = new Set<K>();
    const result = new Promise<Map<K, V>>((resolve, reject) => {
      setTimeout(() => {
        if (this.open?.keys === keys) this.open = undefined;
        this.lookup([...keys]).then(resolve, reject);
      }, this.windowMs);
    });
    // A rejection reaches every caller through get(); the batch itself must not count as unhandled.
    result.catch(() => undefined);
    this.open = { keys, result };
    return this.open;
  }
}
