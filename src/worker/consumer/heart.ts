/**
 * Celery's heart: `worker-online` once, when the worker first consumes, then `worker-heartbeat`
 * every HEARTBEAT_INTERVAL_S while it is connected, so monitors know it is alive.
 */
import { HEARTBEAT_INTERVAL_S, type WorkerEventType, type WorkerStatus } from '../../queue/protocol/events.js';

export interface WorkerEventSender {
  sendWorkerEvent(type: WorkerEventType, status: WorkerStatus): boolean;
}

export class Heart {
  private timer: NodeJS.Timeout | null = null;
  private online = false;

  constructor(
    private readonly events: WorkerEventSender,
    private readonly status: () => WorkerStatus,
  ) {}

  /** Whether `worker-online` went out (the worker consumed at least once). */
  get announcedOnline(): boolean {
    return this.online;
  }

  start(): void {
    this.stop();
    if (!this.online) {
      this.events.sendWorkerEvent('worker-online', this.status());
      this.online = true;
    }
    this.timer = setInterval(() => this.beat(), HEARTBEAT_INTERVAL_S * 1000);
  }

  /** One heartbeat now (also the `heartbeat` control command). */
  beat(): void {
    this.events.sendWorkerEvent('worker-heartbeat', this.status());
  }

  /** `worker-offline`, as the worker stops. */
  offline(): void {
    this.stop();
    this.events.sendWorkerEvent('worker-offline', this.status());
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
