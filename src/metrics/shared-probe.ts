/**
 * One measurement shared by the several metrics it fills. prom-client asks every metric for its
 * values at once during a scrape; the first one to ask starts the measurement and the others
 * wait for the same answer instead of measuring again.
 */
export class SharedProbe<T> {
  private inflight: Promise<T> | null = null;

  constructor(private readonly measure: () => Promise<T>) {}

  run(): Promise<T> {
    this.inflight ??= this.measure().finally(() => {
      // Released on the next turn, so every metric of the same scrape still joins this one.
      setImmediate(() => {
        this.inflight = null;
      });
    });
    return this.inflight;
  }
}
