/**
 * One installer step: a small module with one job, idempotent (checks before it acts), in the
 * preflight phase (changes nothing) or the apply phase. Steps share an InstallContext.
 */
import type { InstallConfig } from '../installation/install-config.js';
import type { InstallLayout } from '../installation/layout.js';
import type { Secrets } from '../installation/secrets.js';
import type { ServiceRuntime } from '../installation/runner/service-runtime.js';
import type { Progress } from './progress.js';

export interface InstallContext {
  layout: InstallLayout;
  config: InstallConfig;
  /** install.json existed before this run: this run is an upgrade/re-run. */
  isUpgrade: boolean;
  previous: Partial<InstallConfig> | undefined;
  /** The administrator's password when given (flag file, env, prompt); undefined = generate or keep. */
  adminPassword: string | undefined;
  forceCerts: boolean;
  noStart: boolean;
  env: NodeJS.ProcessEnv;
  progress: Progress;
  /** Set by the configuration step. */
  secrets?: Secrets;
  runtime?: ServiceRuntime;
  /** Local prerequisites found missing by preflight (installed by the prerequisites step). */
  missingPrerequisites: string[];
  /** Ports already held by this installation's own running services (an upgrade). */
  ownRunningServices: boolean;
  /** Lines for the final summary. */
  summary: string[];
}

export interface Step {
  id: string;
  title: string;
  phase: 'preflight' | 'apply';
  /** A reason to skip, or undefined to run. */
  skip?(ctx: InstallContext): string | undefined;
  /** Returns a short outcome ("kept", "created", ...). */
  run(ctx: InstallContext): Promise<string>;
  /** Services whose logs help when this step fails. */
  relevantServices?: readonly string[];
}

export class StepFailure extends Error {
  constructor(
    readonly step: Step,
    override readonly cause: unknown,
  ) {
    super(`step "${step.title}" failed: ${cause instanceof Error ? cause.message : String(cause)}`);
  }
}
