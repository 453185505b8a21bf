/**
 * Runs the steps in order with a progress line each ("[ 3/16] Certificates: kept (0.2 s)").
 * The log file is attached when the apply phase begins (preflight creates nothing). A failure
 * names the step, shows the last lines of the logs of the services that step depends on, and
 * stops: every step is idempotent, so running the installer again resumes where it failed.
 */
import { openRuntime } from '../installation/runner/open-runtime.js';
import { seconds } from './progress.js';
import { StepFailure, type InstallContext, type Step } from './step.js';

const LOG_LINES = 25;

async function serviceLogs(ctx: InstallContext, step: Step): Promise<string[]> {
  if (!step.relevantServices || step.relevantServices.length === 0) return [];
  const runtime = ctx.runtime ?? (await openRuntime(ctx.layout, ctx.config).catch(() => undefined));
  if (!runtime) return [];
  const lines: string[] = [];
  for (const service of runtime.services.filter((s) => step.relevantServices?.includes(s))) {
    const tail = await runtime.logTail(service, LOG_LINES).catch((err: Error) => `(no logs: ${err.message})`);
    if (tail.trim() === '') continue;
    lines.push(`--- last lines of ${service} ---`, tail);
  }
  return lines;
}

export async function runSteps(steps: readonly Step[], ctx: InstallContext): Promise<void> {
  const width = String(steps.length).length;
  let logAttached = false;
  for (const [index, step] of steps.entries()) {
    const label = `[${String(index + 1).padStart(width)}/${steps.length}] ${step.title}`;
    if (step.phase === 'apply' && !logAttached) {
      ctx.progress.attachLog(ctx.layout.installLog);
      logAttached = true;
    }
    const reason = step.skip?.(ctx);
    if (reason !== undefined) {
      ctx.progress.line(`${label}: skipped (${reason})`);
      continue;
    }
    ctx.progress.line(`${label} ...`);
    const started = Date.now();
    try {
      const outcome = await step.run(ctx);
      ctx.progress.line(`${label}: ${outcome} (${seconds(Date.now() - started)})`);
    } catch (err) {
      ctx.progress.line(`${label}: FAILED after ${seconds(Date.now() - started)}`);
      const message = err instanceof Error ? err.message : String(err);
      ctx.progress.detail(message);
      for (const line of await serviceLogs(ctx, step)) ctx.progress.detail(line);
      throw new StepFailure(step, err);
    }
  }
}
