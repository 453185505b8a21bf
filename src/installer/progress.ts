/**
 * Progress output of the installer and the operator commands: one line when a step starts, one
 * with its outcome and duration when it ends, indented details in between. Everything is also
 * appended to a log file (logs/install.log); lines are kept in memory until the file can be
 * opened, because preflight must not create the install directory. Secrets shown to the
 * operator (a generated password) go to the terminal only, never to the log.
 */
import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

export interface Output {
  write(text: string): unknown;
  /** A terminal: a live line may be redrawn in place. */
  isTTY?: boolean;
}

export class Progress {
  private logFile: string | undefined;
  private logLost = false;
  private pending: string[] = [];

  constructor(private readonly out: Output = process.stdout) {}

  /** From now on (and for what was buffered) lines also go to `file`. */
  attachLog(file: string): void {
    mkdirSync(dirname(file), { recursive: true, mode: 0o750 });
    this.logFile = file;
    appendFileSync(file, `\n=== ${new Date().toISOString()} installer run (pid ${process.pid}) ===\n`, { mode: 0o600 });
    for (const line of this.pending) appendFileSync(file, line);
    this.pending = [];
  }

  get logPath(): string | undefined {
    return this.logFile;
  }

  private log(text: string): void {
    const stamped = text
      .split('\n')
      .map((line) => `${new Date().toISOString()} ${line}`)
      .join('\n');
    const entry = `${stamped}\n`;
    if (this.logFile) this.append(this.logFile, entry);
    else if (!this.logLost) this.pending.push(entry);
  }

  /**
   * A log line that cannot be written must not turn into the installer's failure (and hide the
   * step's real outcome): say so once on the terminal, then go on without the log file.
   */
  private append(file: string, entry: string): void {
    try {
      appendFileSync(file, entry);
    } catch (err) {
      this.logFile = undefined;
      this.logLost = true;
      const reason = (err as NodeJS.ErrnoException).code === 'ENOENT' ? ' (was the install directory removed?)' : '';
      this.out.write(`  ! cannot write the log ${file}: ${(err as Error).message}${reason}; continuing without it\n`);
    }
  }

  private liveShown = false;

  line(text: string): void {
    this.clearLive();
    this.out.write(`${text}\n`);
    this.log(text);
  }

  /**
   * A status line redrawn in place (elapsed time of a long sub-step), on a terminal only and
   * never in the log; the next line() replaces it.
   */
  live(text: string): void {
    if (this.out.isTTY !== true) return;
    this.out.write(`\r\x1b[K${text}`);
    this.liveShown = true;
  }

  clearLive(): void {
    if (!this.liveShown) return;
    this.out.write('\r\x1b[K');
    this.liveShown = false;
  }

  detail(text: string): void {
    const indented = text
      .split('\n')
      .map((l) => `      ${l}`)
      .join('\n');
    this.line(indented);
  }

  warn(text: string): void {
    this.line(`  ! ${text}`);
  }

  /** Shown on the terminal, replaced by a placeholder in the log. */
  secret(text: string, placeholder: string): void {
    this.out.write(`${text}\n`);
    this.log(placeholder);
  }

  /** Only to the log (long outputs such as compose build logs). */
  logOnly(text: string): void {
    this.log(text.trimEnd());
  }
}

export function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}
