/**
 * A lab's Python worker as the tests run it: `cybercom worker` from the client's virtualenv
 * (.venv-client, prepared by test/support/python-client.sh: the client with Celery, pymongo and
 * numpy) as a child process in the lab's code directory, and the manual's task module and
 * submissions (docs/python-tasks.md) it runs.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { LAB_TASK_FILE, codeBlocks, type CodeBlock } from './doc-examples.js';
import { stopProcess } from './celery-env.js';
import { repoRoot } from '../integration/worker/support.js';

export const cybercomCommand = join(repoRoot, '.venv-client/bin/cybercom');
export const clientPython = join(repoRoot, '.venv-client/bin/python');

/** The page's blocks carrying `marker` (task-module, task-module-update, task-submit). */
export function labBlocks(marker: string): CodeBlock[] {
  return codeBlocks(LAB_TASK_FILE).filter((block) => block.markers.includes(marker));
}

export interface LabWorker {
  child: ChildProcess;
  /** Everything it printed so far. */
  log(): string;
  /** Resolves with its exit code (or signal) once it ended. */
  exited: Promise<number | string | null>;
  /** SIGTERM (Celery's warm shutdown: running tasks finish), SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<number | string | null>;
}

/** `cybercom worker <args>` in `cwd` with exactly `env` (plus PATH and HOME). */
export function startLabWorker(args: readonly string[], cwd: string, env: Record<string, string>): LabWorker {
  const child = spawn(cybercomCommand, ['worker', ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', PYTHONDONTWRITEBYTECODE: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stdout?.on('data', (chunk: Buffer) => (log += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (log += chunk.toString()));
  const exited = new Promise<number | string | null>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
  return { child, log: () => log, exited, stop: (graceMs = 20_000) => stopProcess(child, graceMs) };
}
