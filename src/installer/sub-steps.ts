/**
 * The sub-steps of a long script run by a step (ops/prepare-local.sh and the engine build it
 * runs), shown as they happen: the scripts print `<prefix>: [start] <name>` and
 * `<prefix>: [done] <name> (<n> s)` lines (ops/lib/timed-steps.sh); each becomes a detail line of
 * the step, and while one runs a live line counts its seconds on a terminal. Every line of the
 * output, these included, also goes to the install log.
 */
import type { Progress } from './progress.js';

const MARKER = /^[\w-]+: \[(start|done)\] (.+?)(?: \((\d+) s\))?$/;

export type SubStepEvent = { kind: 'start'; name: string } | { kind: 'done'; name: string; seconds: number };

/** The sub-step marker in one output line, if it is one. */
export function parseSubStep(line: string): SubStepEvent | undefined {
  const match = MARKER.exec(line.trimEnd());
  if (!match) return undefined;
  const [, kind, name = ''] = match;
  return kind === 'start' ? { kind, name } : { kind: 'done', name, seconds: Number(match[3] ?? 0) };
}

export class SubStepReporter {
  private partial = '';
  private running: { name: string; since: number } | undefined;
  private ticker: NodeJS.Timeout | undefined;

  constructor(
    private readonly progress: Progress,
    private readonly now: () => number = Date.now,
  ) {}

  /** A chunk of the script's output (lines may be split across chunks). */
  feed(text: string): void {
    this.progress.logOnly(text);
    const lines = (this.partial + text).split('\n');
    this.partial = lines.pop() ?? '';
    for (const line of lines) this.handle(line);
  }

  /** The script ended: stop the live line. */
  end(): void {
    if (this.partial) this.handle(this.partial);
    this.partial = '';
    this.stopTicker();
  }

  private handle(line: string): void {
    const event = parseSubStep(line);
    if (!event) return;
    if (event.kind === 'start') {
      this.stopTicker();
      this.running = { name: event.name, since: this.now() };
      this.progress.detail(`${event.name} ...`);
      this.ticker = setInterval(() => this.tick(), 1000);
      this.ticker.unref();
    } else {
      if (this.running?.name === event.name) this.stopTicker();
      this.progress.detail(`${event.name}: done in ${event.seconds} s`);
    }
  }

  private tick(): void {
    if (!this.running) return;
    this.progress.live(`      ${this.running.name} ... ${Math.round((this.now() - this.running.since) / 1000)} s`);
  }

  private stopTicker(): void {
    if (this.ticker) clearInterval(this.ticker);
    this.ticker = undefined;
    this.running = undefined;
    this.progress.clearLive();
  }
}
