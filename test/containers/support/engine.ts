/**
 * Commands as the installer's user runs them: the installer, ops/ scripts and the `docker` CLI
 * against DOCKER_HOST (Podman's Docker-compatible socket here). Commands run with their output
 * captured; a failure throws with the command line and the output's tail. Containers the tests
 * start themselves go through testcontainers (testcontainers.ts).
 */
import { spawn } from 'node:child_process';

export const DEFAULT_DOCKER_HOST = 'unix:///run/podman/podman.sock';

export function dockerHost(): string {
  return process.env.DOCKER_HOST ?? DEFAULT_DOCKER_HOST;
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Kill the command after this long (it then counts as failed). */
  timeoutMs?: number;
  /** Resolve with the result instead of throwing on a non-zero exit. */
  allowFailure?: boolean;
  input?: string;
  /** Echo output lines as they come, prefixed (long steps show progress). */
  echo?: string;
}

function tail(text: string, lines = 40): string {
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}

export function run(command: string, args: string[], opts: RunOptions = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: opts.cwd,
      env: { ...process.env, DOCKER_HOST: dockerHost(), ...opts.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    const echo = (chunk: Buffer): void => {
      if (opts.echo === undefined) return;
      for (const line of chunk.toString().split('\n')) if (line.trim()) process.stdout.write(`${opts.echo}${line}\n`);
    };
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString();
      echo(c);
    });
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString();
      echo(c);
    });
    const timer = opts.timeoutMs ? setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs) : undefined;
    child.on('error', (err) => {
      if (timer) clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code, signal) => {
      if (timer) clearTimeout(timer);
      const result = { code: code ?? (signal ? 128 : 1), stdout, stderr };
      if (result.code !== 0 && !opts.allowFailure) {
        reject(new Error(`${command} ${args.join(' ')} exited with ${signal ?? code}\n${tail(stdout + stderr)}`));
      } else {
        resolve(result);
      }
    });
    // A command that exits without reading its input must not fail the caller with EPIPE.
    child.stdin.on('error', () => undefined);
    child.stdin.end(opts.input ?? '');
  });
}
