/**
 * One measurement shared by everyone who asks for it at about the same time. prom-client asks
 * every metric for its values at once during a scrape; the first one to ask starts the
 * measurement and the others wait for the same answer instead of measuring again. With
 * `reuseForMs`, an answer is also handed to whoever asks within that time after it came (a
 * failure never is), so a burst of scrapes costs one measurement.
 */
export class SharedProbe<T> {
  private inflight: Promise<T> | null = null;
  /** When the answer in `inflight` stops being handed out; Infinity while it is awaited. */
  private reusableUntil = Infinity;

  constructor(
    private readonly measure: () => Promise<T>,
    private readonly reuseForMs = 0,
  ) {}

  run(now = Date.now()): Promise<T> {
    if (this.inflight !== null && now < this.reusableUntil) return this.inflight;
    this.reusableUntil = Infinity;
    const current = this.measure().then(
      (value) => {
        if (this.reuseForMs > 0) this.reusableUntil = Date.now() + this.reuseForMs;
        else this.release(current);
        return value;
      },
      (error: unknown) => {
        this.release(current);
        throw error;
      },
    );
    this.inflight = current;
    return current;
  }

  private release(answer: Promise<T>): void {
    // Released on the next turn, so every metric of the same scrape still joins this one.
    setImmediate(() => {
      if (this.inflight === answer) this.inflight = null;
    });
  }
}
