/** Runs the Python client's pytest suite (or part of it) in its virtualenv, as a test would. */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from '../integration/worker/support.js';

export interface PytestRun {
  code: number | null;
  /** stdout and stderr, interleaved as they came. */
  output: string;
  /** The last 40 lines of the output: the failures' short summary and the counts. */
  summary: string;
}

/** `python -m pytest <args> -p no:cacheprovider -rs -q --durations=5` in clients/python. */
export function runClientPytest(args: readonly string[], env: NodeJS.ProcessEnv): Promise<PytestRun> {
  return new Promise((resolve) => {
    const child = spawn(
      join(repoRoot, '.venv-client/bin/python'),
      ['-m', 'pytest', ...args, '-p', 'no:cacheprovider', '-rs', '-q', '--durations=5'],
      { cwd: join(repoRoot, 'clients/python'), env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('exit', (code) => resolve({ code, output, summary: output.trim().split('\n').slice(-40).join('\n') }));
  });
}
