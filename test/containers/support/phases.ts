/**
 * Named phases with wall-clock timings, and named checks counted for the closing
 * `N passed, N failed` line. A failed check is recorded and rethrown: later phases build on
 * earlier ones, so the run stops at the first failure (clean-up still runs in `finally`).
 */
export class Report {
  private readonly started = Date.now();
  private readonly phases: Array<{ name: string; ms: number; ok: boolean }> = [];
  passed = 0;
  failed = 0;

  async phase<T>(name: string, fn: () => Promise<T>): Promise<T> {
    const t0 = Date.now();
    console.log(`\n== ${name}`);
    let ok = false;
    try {
      const value = await fn();
      ok = true;
      return value;
    } finally {
      const ms = Date.now() - t0;
      this.phases.push({ name, ms, ok });
      console.log(`== ${name}: ${ok ? 'done' : 'FAILED'} in ${(ms / 1000).toFixed(1)} s`);
    }
  }

  async check(name: string, fn: () => Promise<void> | void): Promise<void> {
    try {
      await fn();
      this.passed += 1;
      console.log(`  ok   ${name}`);
    } catch (err) {
      this.failed += 1;
      console.log(`  FAIL ${name}\n${indent(err instanceof Error ? err.message : String(err))}`);
      throw err;
    }
  }

  summary(): string {
    const rows = this.phases.map((p) => `  ${(p.ms / 1000).toFixed(1).padStart(7)} s  ${p.ok ? '   ' : '!! '}${p.name}`);
    const total = ((Date.now() - this.started) / 1000).toFixed(1);
    return ['Phase timings:', ...rows, `  ${total.padStart(7)} s  total`].join('\n');
  }
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((l) => `       ${l}`)
    .join('\n');
}

export function assert(condition: unknown, message: string): asserts condition {
  if (!condition) throw new Error(message);
}
