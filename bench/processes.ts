/** Child processes of the benchmarks: the API and baseline servers, started and stopped cleanly. */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync, rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { basename, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { apiExecArgv, apiProcessEnv } from '../src/config/api-memory.js';
import { ensureServiceBuild } from '../src/installation/runner/service-build.js';

/** Where children write their output (see startChild), under the benchmarks' ignored state. */
const LOG_DIR = resolve('.state/bench-logs');
/** How often the log is read while the child starts. */
const READY_POLL_MS = 25;
let started = 0;
/** Each child's output file, removed when it is stopped unless BENCH_KEEP_LOGS=1. */
const logFiles = new WeakMap<ChildProcess, string>();

/**
 * Starts `command` and resolves once a line of its output matches `readyPattern`. The child's
 * stdout goes to a file (`.state/bench-logs/`), not to a pipe this process reads: the API logs
 * every request as it does in production, and reading those lines here would cost the load
 * generator's CPU (on a small machine, the cores the servers run on) for the API's phases only,
 * since the baseline server logs nothing. The file is read only until the child is ready.
 * `cwd`: where the child runs (this process's directory when not given).
 */
export async function startChild(
  command: string[],
  env: Record<string, string>,
  readyPattern: RegExp,
  cwd?: string,
): Promise<{ child: ChildProcess; line: string; logFile: string }> {
  mkdirSync(LOG_DIR, { recursive: true });
  const logFile = resolve(LOG_DIR, `${basename(command.at(-1) ?? 'child').replace(/[^\w.-]/g, '_')}-${process.pid}-${++started}.log`);
  const fd = openSync(logFile, 'w');
  let child: ChildProcess;
  try {
    child = spawn(command[0] as string, command.slice(1), { cwd, env: { ...process.env, ...env }, stdio: ['ignore', fd, 'inherit'] });
  } finally {
    // The child holds its own copy of the descriptor.
    closeSync(fd);
  }
  logFiles.set(child, logFile);
  let exited: number | null | undefined;
  child.once('exit', (code) => (exited = code));
  const line = await readyLine(logFile, readyPattern, () => exited);
  if (line === undefined) {
    if (exited === undefined) child.kill('SIGTERM');
    const why = exited === undefined ? 'did not start within 60 s' : `exited with ${exited}`;
    throw new Error(`${command.join(' ')} ${why} (its output: ${logFile})`);
  }
  return { child, line, logFile };
}

/** The first line of `file` that matches `pattern`, read as it is written, or undefined once `exitCode()` says the writer ended or a minute passed. */
async function readyLine(file: string, pattern: RegExp, exitCode: () => number | null | undefined): Promise<string | undefined> {
  const handle = await open(file, 'r');
  try {
    let text = '';
    let position = 0;
    const buffer = Buffer.alloc(64 * 1024);
    for (const deadline = Date.now() + 60_000; Date.now() < deadline;) {
      const ended = exitCode() !== undefined;
      for (;;) {
        const { bytesRead } = await handle.read(buffer, 0, buffer.length, position);
        if (bytesRead === 0) break;
        position += bytesRead;
        text += buffer.toString('utf8', 0, bytesRead);
      }
      const lines = text.split('\n');
      text = lines.pop() ?? '';
      const found = lines.find((l) => pattern.test(l));
      if (found !== undefined) return found;
      if (ended) return undefined;
      await sleep(READY_POLL_MS);
    }
    return undefined;
  } finally {
    await handle.close();
  }
}

export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  }
  const logFile = logFiles.get(child);
  if (logFile !== undefined && process.env.BENCH_KEEP_LOGS !== '1') rmSync(logFile, { force: true });
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

/**
 * `serve` as the local runtime runs it: the compiled build of the checkout at `root` (compiled
 * first when a source is newer), the API's Node flags with `nodeFlags` (a profiler's, say) before
 * the entry point, its allocator settings and NODE_ENV=production.
 */
export async function installedApi(nodeFlags: string[] = [], root?: string): Promise<{ command: string[]; env: Record<string, string> }> {
  const { entry } = await ensureServiceBuild(root);
  const installed = installedApiProcess([...nodeFlags, entry, 'serve']);
  return { command: installed.command, env: { ...installed.env, NODE_ENV: 'production' } };
}
