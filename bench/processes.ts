/** Child processes of the benchmarks: the API and baseline servers, started and stopped cleanly. */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { apiExecArgv, apiProcessEnv } from '../src/config/api-memory.js';

/** Starts `command` and resolves once a line of its stdout matches `readyPattern`. */
export async function startChild(
  command: string[],
  env: Record<string, string>,
  readyPattern: RegExp,
): Promise<{ child: ChildProcess; line: string }> {
  const child = spawn(command[0] as string, command.slice(1), { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const line = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${command.join(' ')} did not start`)), 60_000);
    lines.on('line', (l) => {
      if (readyPattern.test(l)) {
        clearTimeout(timer);
        resolve(l);
      }
    });
    child.once('exit', (code) => reject(new Error(`${command.join(' ')} exited with ${code}`)));
  });
  return { child, line };
}

export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

/**
 * The settings of an API (or worker) process in a benchmark: the local services' connection
 * settings, a fixed secret key, the benchmark's own service database, quiet logs, plus `extra`.
 */
export function benchServiceEnv(
  servicesEnv: Record<string, string>,
  serviceDatabase: string,
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    ...servicesEnv,
    SECRET_KEY: 'bench-secret-key-0123456789abcdefghijklmnopqrstuvwxyz',
    SERVICE_DATABASE: serviceDatabase,
    ALLOWED_HOSTS: '127.0.0.1,localhost',
    LOG_LEVEL: 'warn',
    // One API process unless a benchmark asks for more: the measurements stay comparable with
    // earlier runs, and a child's pid is the process that serves (its peak RSS is measured).
    API_PROCESSES: '1',
    ...extra,
  };
}

/**
 * An API process as an installation starts it (the local runtime's supervisor does, and the
 * cluster primary for each process it forks): Node with the API's memory flags, then `args`
 * (the entry point and `serve`), and the allocator settings its environment needs.
 */
export function installedApiProcess(args: string[]): { command: string[]; env: Record<string, string> } {
  return { command: [process.execPath, ...apiExecArgv([], process.env.NODE_OPTIONS), ...args], env: apiProcessEnv(process.env) };
}
