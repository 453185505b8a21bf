/**
 * Slots that callers (a user, or a client address for anonymous callers) hold while some costly
 * work of theirs runs: how many each one holds, how many all hold together, and since when. The
 * limiters built on it (heavy-queries.ts, streamed-reads.ts) decide the limits and the refusals.
 *
 * The counts live in this API process only: with several API processes behind a proxy each keeps
 * its own, so the effective limits are multiplied by the number of processes.
 */

/** Frees the slot; calling it again does nothing. */
export type ReleaseSlot = () => void;

export class CallerSlots {
  /** caller key → start times (ms) of the slots that caller holds */
  private readonly held = new Map<string, number[]>();
  private total = 0;

  constructor(private readonly now: () => number = Date.now) {}

  /** Slots held by one caller, or by everyone. */
  inUse(caller?: string): number {
    return caller === undefined ? this.total : (this.held.get(caller)?.length ?? 0);
  }

  /** When the slots of one caller, or of everyone, were taken (ms). */
  starts(caller?: string): number[] {
    return caller === undefined ? [...this.held.values()].flat() : [...(this.held.get(caller) ?? [])];
  }

  take(caller: string): ReleaseSlot {
    const started = this.now();
    const mine = this.held.get(caller) ?? [];
    mine.push(started);
    this.held.set(caller, mine);
    this.total += 1;
    let holding = true;
    return () => {
      if (!holding) return;
      holding = false;
      this.total -= 1;
      const list = this.held.get(caller) ?? [];
      list.splice(list.indexOf(started), 1);
      if (list.length === 0) this.held.delete(caller);
    };
  }
}
