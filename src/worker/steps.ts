/**
 * The worker's start and stop order as data (Celery's bootsteps): a list of steps, each with a
 * start and a stop, started in the list's order and stopped in the reverse order. A stop that
 * fails is reported and the next one still runs, so one part that cannot close (a broker that no
 * longer answers) never leaves the parts after it open.
 */
export interface Step {
  /** For logs: which step failed to stop. */
  readonly name: string;
  start(): void | Promise<void>;
  stop(): void | Promise<void>;
}

export class Steps {
  constructor(
    private readonly steps: readonly Step[],
    private readonly onStopFailed: (step: string, error: unknown) => void,
  ) {}

  /** Starts every step in order, each once the one before it has started; `stopped` ends it early. */
  async start(stopped: () => boolean = () => false): Promise<void> {
    for (const step of this.steps) {
      if (stopped()) return;
      await step.start();
    }
  }

  /**
   * Stops every step, the last first, each on its own: a step that was never started is stopped
   * too (each stop is safe then), so a worker closed while it starts leaves nothing open.
   */
  async stop(): Promise<void> {
    for (const step of [...this.steps].reverse()) {
      try {
        await step.stop();
      } catch (error) {
        this.onStopFailed(step.name, error);
      }
    }
  }
}
