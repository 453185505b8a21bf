/**
 * The processes of a test's PostgreSQL cluster as the operating system sees them (Linux /proc):
 * the postmaster named in postmaster.pid and its children by parent pid, for tests that kill or
 * stop some of them the way a crash would.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { until } from './until.js';

export interface PostgresProcess {
  pid: number;
  /** The process title, e.g. "postgres: pg_cron launcher". */
  title: string;
}

/** The postmaster's pid: the first line of postmaster.pid in the data directory. */
export async function postmasterPid(dataDir: string): Promise<number> {
  const text = await readFile(join(dataDir, 'postmaster.pid'), 'utf8');
  return Number(text.split('\n')[0]);
}

/** The live children of `parent` (zombies left out). */
export function childrenOf(parent: number): PostgresProcess[] {
  const children: PostgresProcess[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(ppid) !== parent || state === 'Z') continue;
      const title = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
      children.push({ pid: Number(entry), title });
    } catch {
      // gone meanwhile
    }
  }
  return children;
}

/** Waits until `parent` has a child whose title matches (background workers start a moment late). */
export async function waitForChild(parent: number, title: RegExp, timeoutMs = 30_000): Promise<PostgresProcess> {
  return until(() => childrenOf(parent).find((c) => title.test(c.title)), timeoutMs, `a child of ${parent} matching ${title}`);
}

/** The state letter of a process from /proc/<pid>/stat ('T': stopped), or undefined once it is gone. */
export function processState(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
  } catch {
    return undefined;
  }
}
