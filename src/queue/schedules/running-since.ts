/**
 * Since when this process's scheduler has run without a break: what tells a fire it reached late
 * because it was slow (it fires, late) from one that passed while no scheduler ran (downtime: caught
 * up or missed, see plan.ts). A heartbeat notes the time every BEAT_MS; a gap between two beats
 * longer than the stall limit means the process did not run meanwhile (stopped with SIGSTOP, its
 * machine suspended, its event loop held), and the unbroken run starts again after it, so that the
 * fires of an hour's suspension are not all published at once on waking.
 */
const BEAT_MS = 1_000;

export class RunningSince {
  private since: number;
  private last: number;
  private readonly timer: NodeJS.Timeout;

  /** `stallMs`: a gap between beats longer than this is a break. `now`: the clock (tests give their own). */
  constructor(
    private readonly stallMs: number,
    private readonly now: () => number = Date.now,
  ) {
    this.since = this.now();
    this.last = this.since;
    this.timer = setInterval(() => this.beat(), BEAT_MS);
    this.timer.unref();
  }

  /** Notes that the process runs now; called by the heartbeat, and by the scheduler before each plan. */
  beat(): void {
    const now = this.now();
    if (now - this.last > this.stallMs) this.since = now;
    this.last = now;
  }

  /** The start of the current unbroken run. */
  get(): Date {
    this.beat();
    return new Date(this.since);
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
