/**
 * Processes a server left behind, found by what they are rather than by family: the program they
 * run and the directory they work in. A server's children may leave its process group (each of
 * PostgreSQL's calls setsid()), and once their parent is gone they are the init process's
 * children, so neither a group signal nor the parent pid reaches them. What still ties a
 * PostgreSQL process to its cluster is that it runs the server's binary with the cluster's data
 * directory as its working directory (the postmaster changes into it before forking anything).
 * Both must match: an operator's shell inside the data directory is not the server's, and
 * neither is another cluster's process.
 *
 * Linux only (/proc). Processes of other users whose links we may not read are skipped: as
 * anyone but root, the server runs as ourselves anyway.
 */
import { readFileSync, readdirSync, readlinkSync, realpathSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { isProcessAlive } from './processes.js';

export interface ProcessInfo {
  pid: number;
  /** The command line as the process shows it (PostgreSQL's say what each one is). */
  command: string;
}

/** readlink of a /proc link, without the " (deleted)" the kernel adds for a removed target. */
function procLink(pid: number, link: 'cwd' | 'exe'): string | undefined {
  try {
    return readlinkSync(`/proc/${pid}/${link}`).replace(/ \(deleted\)$/, '');
  } catch {
    return undefined; // gone meanwhile, or not ours to read
  }
}

function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
  } catch {
    return '';
  }
}

function realPath(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

/** The running processes of `executable` whose working directory is `dir`. */
export function processesWorkingIn(executable: string, dir: string): ProcessInfo[] {
  const program = realPath(executable);
  const workingDir = realPath(dir);
  if (program === undefined || workingDir === undefined) return [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  const found: ProcessInfo[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (pid === process.pid) continue;
    if (procLink(pid, 'cwd') !== workingDir || procLink(pid, 'exe') !== program) continue;
    if (!isProcessAlive(pid)) continue; // a zombie: exited already, holds nothing
    found.push({ pid, command: commandLine(pid) });
  }
  return found;
}

/**
 * SIGKILLs the processes and waits up to `timeoutMs` until they are gone. Returns those still
 * there (a process in uninterruptible sleep ends only when its I/O does).
 */
export async function killAndWait(processes: ProcessInfo[], timeoutMs: number): Promise<ProcessInfo[]> {
  for (const { pid } of processes) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
    }
  }
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const left = processes.filter(({ pid }) => isProcessAlive(pid));
    if (left.length === 0 || Date.now() >= deadline) return left;
    await sleep(50);
  }
}
