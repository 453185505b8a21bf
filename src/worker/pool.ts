/**
 * The worker's concurrency slots (Celery's pool): requests wait in arrival order and start while
 * fewer than `concurrency` task bodies run. A slot is held for the body only: recording the
 * outcome and acknowledging the message go on after the slot is handed to the next request, as
 * Celery's prefork parent acknowledges while its child already runs the next task.
 */
export class Pool<T> {
  private waiting: T[] = [];
  private busy = 0;
  private open = true;

  /** `start` gets the item and the slot's release, to call once when its body is done. */
  constructor(
    readonly concurrency: number,
    private readonly start: (item: T, release: () => void) => void,
  ) {
    if (!Number.isInteger(concurrency) || concurrency < 1)
      throw new RangeError(`concurrency must be a positive integer, not ${concurrency}`);
  }

  /** Bodies running now. */
  get running(): number {
    return this.busy;
  }

  /** Requests waiting for a slot. */
  get queued(): number {
    return this.waiting.length;
  }

  submit(item: T): void {
    this.waiting.push(item);
    this.pump();
  }

  /** Takes every waiting request out (they were not started); the pool stays as it is otherwise. */
  takeWaiting(): T[] {
    const taken = this.waiting;
    this.waiting = [];
    return taken;
  }

  /** Starts nothing more (shutdown); running bodies keep their slots until they release them. */
  close(): void {
    this.open = false;
  }

  private pump(): void {
    while (this.open && this.busy < this.concurrency && this.waiting.length > 0) {
      const item = this.waiting.shift() as T;
      this.busy++;
      let released = false;
      this.start(item, () => {
        if (released) return;
        released = true;
        this.busy--;
        this.pump();
      });
    }
  }
}
