/**
 * Turns at something costly: at most `capacity` holders at once, the others served in arrival
 * order, each waiting at most `maxWaitMs` for its turn (then it gets none and is told so).
 */
export class TurnGate {
  private holders = 0;
  private readonly queue: (() => void)[] = [];

  constructor(
    private readonly capacity: number,
    private readonly maxWaitMs: number,
  ) {}

  /** A function that ends the turn once it has come, or undefined when it did not come in time. */
  async enter(): Promise<(() => void) | undefined> {
    if (this.holders < this.capacity) return this.turn();
    return new Promise((resolve) => {
      const served = (): void => {
        clearTimeout(timer);
        resolve(this.turn());
      };
      const timer = setTimeout(() => {
        const at = this.queue.indexOf(served);
        if (at >= 0) this.queue.splice(at, 1);
        resolve(undefined);
      }, this.maxWaitMs);
      this.queue.push(served);
    });
  }

  private turn(): () => void {
    this.holders += 1;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.holders -= 1;
      this.queue.shift()?.();
    };
  }
}
