/**
 * Child processes for local servers: each runs in its own process group (so a whole tree, e.g.
 * su -> sh -> beam.smp, can be signalled at once), writes its output straight to a log file (no
 * pipe through Node, so a dying parent does not take the child down with SIGPIPE), and never
 * outlives this Node process:
 *   - on a normal exit, SIGINT, SIGTERM or SIGHUP we signal every live group;
 *   - a tiny detached shell watchdog per child covers the cases Node cannot handle (SIGKILL,
 *     crash): it polls the parent pid and terminates the group once the parent is gone.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, closeSync, constants, readdirSync, readFileSync } from 'node:fs';
import { open, readFile } from 'node:fs/promises';
import { delimiter, isAbsolute, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { openLogFile } from './service-logs.js';

/** What every supervised server handle offers (RabbitMQ, the MongoDB-wire server). */
export interface ServerHandle {
  /** The server's process (leader of its own process group). */
  pid: number;
  port: number;
  logFile: string;
  /** Settles when the server process exits, for whatever reason (a supervisor restarts it). */
  exited: Promise<ExitStatus>;
  stop(): Promise<void>;
}

export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ManagedProcess {
  readonly pid: number;
  readonly logFile: string;
  /** Settles when the process has exited (never rejects). */
  readonly exited: Promise<ExitStatus>;
  /** Aborted when the process exits: pass to waits so they stop early on a crash. */
  readonly exitSignal: AbortSignal;
  isRunning(): boolean;
  /** Signal the whole process group. */
  signalGroup(signal: NodeJS.Signals): void;
  /**
   * SIGTERM the group, wait up to graceMs, then SIGKILL it. Resolves once the whole group is gone,
   * not just its leader, so whoever starts a successor never meets a straggler on a port or a file.
   */
  terminate(graceMs?: number): Promise<ExitStatus>;
}

export interface SpawnManagedOptions {
  logFile: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

const liveGroups = new Set<number>();
let handlersInstalled = false;

function killGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}

/**
 * Linux: the state letter and process group of a process from /proc/<pid>/stat ('Z' for a zombie:
 * it has exited, its parent has not collected it yet), or undefined when unknown.
 */
function procStat(pid: number): { state: string; pgrp: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0] ?? '', pgrp: Number(fields[2]) };
  } catch {
    return undefined;
  }
}

/**
 * Whether the process runs. A zombie does not: it has exited, and whoever adopted it (an init
 * that reaps slowly, say) has only not collected it yet.
 */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  return procStat(pid)?.state !== 'Z';
}

/** Whether any process of the process group `pgid` still runs (zombies do not count, see above). */
export function isGroupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return true; // no /proc: the signal test is all we have
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = procStat(Number(entry));
    if (stat && stat.pgrp === pgid && stat.state !== 'Z') return true;
  }
  return false;
}

/**
 * Waits until the process group is empty (its leader exiting is not enough: e.g. beam.smp may
 * outlive the shell that started it), polling until `deadline` (epoch ms). True when it is empty.
 */
export async function waitForGroupExit(pgid: number, deadline: number, intervalMs = 100): Promise<boolean> {
  for (;;) {
    if (!isGroupAlive(pgid)) return true;
    if (Date.now() >= deadline) return false;
    await sleep(intervalMs);
  }
}

function onSignal(signal: NodeJS.Signals): void {
  for (const pgid of liveGroups) killGroup(pgid, 'SIGTERM');
  // Someone else (vitest, the CLI) also handles this signal: let them decide how to exit.
  if (process.listenerCount(signal) > 1) return;
  // We were the only handler, which replaced the default action: restore and re-raise it.
  process.removeListener(signal, onSignal);
  process.kill(process.pid, signal);
}

function installExitHandlers(): void {
  if (handlersInstalled) return;
  handlersInstalled = true;
  // 'exit' handlers must be synchronous; the watchdogs escalate to SIGKILL if SIGTERM is ignored.
  process.on('exit', () => {
    for (const pgid of liveGroups) killGroup(pgid, 'SIGTERM');
  });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, onSignal);
}

// $1 parent pid, $2 child pid (= its process group id). Exits by itself when the child ends.
// A zombie parent (dead, not yet collected by whoever adopted it) counts as gone.
const WATCHDOG = `
alive() {
  kill -0 "$1" 2>/dev/null || return 1
  read -r stat < "/proc/$1/stat" 2>/dev/null || return 0
  rest=\${stat##*) }
  [ "\${rest%% *}" != Z ]
}
while alive "$1" && kill -0 "$2" 2>/dev/null; do sleep 1; done
kill -0 "$2" 2>/dev/null || exit 0
kill -TERM -"$2" 2>/dev/null
i=0
while kill -0 "$2" 2>/dev/null && [ "$i" -lt 20 ]; do sleep 0.5; i=$((i + 1)); done
kill -KILL -"$2" 2>/dev/null
exit 0
`;

function startWatchdog(childPid: number): void {
  const watchdog = spawn('/bin/sh', ['-c', WATCHDOG, 'watchdog', String(process.pid), String(childPid)], {
    detached: true,
    stdio: 'ignore',
  });
  watchdog.on('error', () => undefined);
  watchdog.unref();
}

export async function spawnManaged(command: string, args: string[], opts: SpawnManagedOptions): Promise<ManagedProcess> {
  installExitHandlers();
  const logFd = openLogFile(opts.logFile);
  let child: ChildProcess;
  try {
    child = spawn(command, args, {
      detached: true, // own session and process group; also keeps terminal SIGINT away from it
      stdio: ['ignore', logFd, logFd],
      env: opts.env ?? process.env,
      cwd: opts.cwd,
    });
  } finally {
    closeSync(logFd); // the child holds its own copy
  }
  await new Promise<void>((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', reject);
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error(`could not start ${command}`);
  liveGroups.add(pid);
  startWatchdog(pid);

  const exitController = new AbortController();
  let running = true;
  const exited = new Promise<ExitStatus>((resolve) => {
    child.once('exit', (code, signal) => {
      running = false;
      liveGroups.delete(pid);
      exitController.abort(new Error(`${command} exited (code ${code}, signal ${signal})`));
      resolve({ code, signal });
    });
  });

  const signalGroup = (signal: NodeJS.Signals): void => killGroup(pid, signal);
  return {
    pid,
    logFile: opts.logFile,
    exited,
    exitSignal: exitController.signal,
    isRunning: () => running,
    signalGroup,
    async terminate(graceMs = 10_000): Promise<ExitStatus> {
      const deadline = Date.now() + graceMs;
      if (running) {
        signalGroup('SIGTERM');
        const timer = new AbortController();
        const status = await Promise.race([
          exited,
          sleep(graceMs, undefined, { signal: timer.signal }).then(
            () => undefined,
            () => undefined,
          ),
        ]);
        timer.abort(); // don't keep the event loop alive for the rest of the grace period
        if (!status) signalGroup('SIGKILL');
      }
      const status = await exited;
      // The leader is gone; what is left of its group gets the rest of the grace period.
      if (isGroupAlive(pid)) {
        signalGroup('SIGTERM');
        if (!(await waitForGroupExit(pid, Math.max(deadline, Date.now() + 1000)))) {
          signalGroup('SIGKILL');
          await waitForGroupExit(pid, Date.now() + 5000);
        }
      }
      return status;
    },
  };
}

/**
 * Repeats `attempt` until it succeeds, for a server whose port is open but which may not yet
 * accept logins: the wait between attempts grows by 250 ms up to 2 s. Gives up with the last
 * error once `timeoutMs` have passed since `started`, or at once when `stopped` fires (the
 * server exited, so retrying is pointless).
 */
export async function retryUntilReady(
  attempt: () => Promise<void>,
  opts: { started: number; timeoutMs: number; stopped: AbortSignal },
): Promise<void> {
  for (let n = 1; ; n++) {
    try {
      await attempt();
      return;
    } catch (err) {
      opts.stopped.throwIfAborted();
      if (Date.now() - opts.started > opts.timeoutMs) throw err;
      await sleep(Math.min(250 * n, 2000));
    }
  }
}

/** The last `lines` lines of a log file, for start-up error messages. */
export async function logTail(file: string, lines = 40, maxBytes = 64 * 1024): Promise<string> {
  let handle;
  try {
    handle = await open(file, 'r');
    const { size } = await handle.stat();
    const length = Math.min(size, maxBytes);
    const buffer = Buffer.alloc(length);
    await handle.read(buffer, 0, length, size - length);
    return buffer
      .toString('utf8')
      .split('\n')
      .slice(-lines - 1)
      .join('\n')
      .trimEnd();
  } catch {
    return '(no log output)';
  } finally {
    await handle?.close();
  }
}

/** The first `max` lines of a log file matching `pattern` (the root cause often precedes a long crash report). */
async function firstMatchingLines(file: string, pattern: RegExp, max = 12): Promise<string[]> {
  try {
    const text = await readFile(file, 'utf8');
    return text
      .split('\n')
      .filter((line) => pattern.test(line))
      .slice(0, max);
  } catch {
    return [];
  }
}

/**
 * Error for a server that did not come up, carrying the tail of its log and, when `highlight` is
 * given, the first log lines matching it.
 */
export async function startupError(what: string, cause: unknown, logFile: string, highlight?: RegExp): Promise<Error> {
  const reason = cause instanceof Error ? cause.message : String(cause);
  const parts = [`${what} did not start: ${reason}`];
  const first = highlight ? await firstMatchingLines(logFile, highlight) : [];
  if (first.length > 0) parts.push(`--- first errors in ${logFile} ---`, ...first);
  parts.push(`--- last lines of ${logFile} ---`, await logTail(logFile));
  return new Error(parts.join('\n'), { cause });
}

/** Like `which`: an executable on PATH (or in extra directories), else undefined. */
export function findExecutable(name: string, extraDirs: string[] = []): string | undefined {
  const candidates = isAbsolute(name)
    ? [name]
    : [...(process.env.PATH ?? '').split(delimiter).filter(Boolean), ...extraDirs].map((dir) => join(dir, name));
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}
