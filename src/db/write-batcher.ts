/**
 * Coalesces concurrent writes into one database round trip. While a batch is in flight, new
 * writes wait and leave together as the next batch; an idle batcher sends at once, so there is
 * no timer and no added latency at low load. Under load N concurrent writes cost about one round
 * trip instead of N: MongoDB and FerretDB (which commits one PostgreSQL transaction per command)
 * both apply one bulk command far faster than the same writes one by one.
 *
 * Every caller still gets its own outcome: `flush` reports one error (or null) per item.
 */

export type BatchFlush<T> = (items: readonly T[]) => Promise<readonly (Error | null)[]>;

interface Waiting<T> {
  item: T;
  resolve: () => void;
  reject: (error: Error) => void;
}

export class WriteBatcher<T> {
  private waiting: Waiting<T>[] = [];
  private inFlight: Promise<void> | null = null;

  constructor(
    private readonly flush: BatchFlush<T>,
    private readonly maxBatch = 500,
  ) {
    if (!Number.isInteger(maxBatch) || maxBatch < 1) throw new RangeError('maxBatch must be a positive integer');
  }

  /** Resolves once this item is written; rejects with this item's own error. */
  write(item: T): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      this.send();
    });
  }

  /** Resolves when nothing is waiting or in flight (used at shutdown). */
  async idle(): Promise<void> {
    while (this.inFlight !== null) await this.inFlight;
  }

  private send(): void {
    if (this.inFlight !== null || this.waiting.length === 0) return;
    const batch = this.waiting.splice(0, this.maxBatch);
    this.inFlight = this.flushBatch(batch).finally(() => {
      this.inFlight = null;
      this.send();
    });
  }

  private async flushBatch(batch: Waiting<T>[]): Promise<void> {
    let outcomes: readonly (Error | null)[];
    try {
      outcomes = await this.flush(batch.map((w) => w.item));
    } catch (error) {
      const failure = error instanceof Error ? error : new Error(String(error));
      for (const w of batch) w.reject(failure);
      return;
    }
    batch.forEach((w, i) => {
      const outcome = outcomes[i];
      if (outcome === undefined) w.reject(new Error('the batch reported no outcome for this write'));
      else if (outcome === null) w.resolve();
      else w.reject(outcome);
    });
  }
}
