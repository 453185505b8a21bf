/**
 * Requests held until their ETA (Celery's timer): their messages stay unacknowledged, like
 * Celery's, with room beside the prefetch window meanwhile (see prefetch-window.ts), and go to
 * the pool when due.
 */
import type { TaskRequest } from './request/task-request.js';

export class EtaSchedule {
  private readonly timers = new Map<NodeJS.Timeout, TaskRequest>();

  /** `due` gets each request when its time has come. */
  constructor(private readonly due: (request: TaskRequest) => void) {}

  hold(request: TaskRequest, delayMs: number): void {
    request.holdForEta();
    // setTimeout overflows past ~24.8 days; wake up and re-check instead.
    const timer = setTimeout(
      () => {
        this.timers.delete(timer);
        const remaining = (request.task.eta?.getTime() ?? 0) - Date.now();
        if (remaining > 0) this.hold(request, remaining);
        else {
          request.releaseHold();
          this.due(request);
        }
      },
      Math.min(delayMs, 2 ** 31 - 1),
    );
    this.timers.set(timer, request);
  }

  /** The connection is lost and the held messages went back to the queue with it: forget them. */
  forget(): void {
    for (const timer of this.timers.keys()) clearTimeout(timer);
    this.timers.clear();
  }

  /** Shutdown: every held message goes back to its queue. */
  returnAll(): void {
    for (const [timer, request] of this.timers) {
      clearTimeout(timer);
      request.requeue();
    }
    this.timers.clear();
  }
}
