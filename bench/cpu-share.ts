/**
 * Where the machine's CPU went during a benchmark phase (Linux /proc): the API processes, the
 * database engine, the broker, the load generator (this process) and the rest, as shares of all
 * cores' time, idle included. It tells whether the API is what limits a rate: on a small machine
 * the database and the broker share the same cores, and a second API process cannot add CPU
 * that is not there.
 */
import { readFileSync, readdirSync } from 'node:fs';

interface Snapshot {
  /** Every core's clock ticks since boot: total and idle (idle + iowait). */
  total: number;
  idle: number;
  /** pid → [command name, parent pid, user + system ticks]. */
  processes: Map<number, { comm: string; ppid: number; ticks: number }>;
}

export function cpuSnapshot(): Snapshot {
  const cpu = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').trim().split(/\s+/).slice(1).map(Number);
  const total = cpu.reduce((a, b) => a + b, 0);
  const idle = (cpu[3] ?? 0) + (cpu[4] ?? 0);
  const processes = new Map<number, { comm: string; ppid: number; ticks: number }>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      processes.set(Number(entry), { comm, ppid: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) });
    } catch {
      // Ended meanwhile.
    }
  }
  return { total, idle, processes };
}

function descendants(of: number[], processes: Snapshot['processes']): Set<number> {
  const found = new Set(of);
  for (let grew = true; grew;) {
    grew = false;
    for (const [pid, p] of processes)
      if (!found.has(pid) && found.has(p.ppid)) {
        found.add(pid);
        grew = true;
      }
  }
  return found;
}

const GROUPS: Array<[string, RegExp]> = [
  ['database', /^(postgres|ferretdb|mongod)/],
  ['broker', /^(beam\.smp|erl_child_setup|epmd|inet_gethost)/],
];

/**
 * CPU milliseconds per request of each process tree in `roots` (its descendants count too: tsx's
 * command line runs the script in a child) between two snapshots. Measured per process, so it
 * stays meaningful on a machine that other work shares, unlike a rate.
 */
export function cpuMsPer(before: Snapshot, after: Snapshot, roots: Record<string, number[]>, requests: number): Record<string, number> {
  const ms: Record<string, number> = {};
  for (const [name, pids] of Object.entries(roots)) {
    let ticks = 0;
    for (const pid of descendants(pids, after.processes)) {
      ticks += (after.processes.get(pid)?.ticks ?? 0) - (before.processes.get(pid)?.ticks ?? 0);
    }
    // Clock ticks are 10 ms on Linux (USER_HZ = 100).
    ms[name] = (ticks * 10) / requests;
  }
  return ms;
}

/**
 * CPU milliseconds per request of the database engine and the broker (by process name, as in
 * cpuShares) between two snapshots: with cpuMsPer's figures, what one request costs the machine.
 * Only the services this process started count (its descendants): other work on the machine may
 * run brokers and databases of its own.
 */
export function serviceMsPer(before: Snapshot, after: Snapshot, requests: number, root = process.pid): Record<string, number> {
  const ms: Record<string, number> = {};
  const own = descendants([root], after.processes);
  for (const [pid, p] of after.processes) {
    if (!own.has(pid)) continue;
    const group = GROUPS.find(([, pattern]) => pattern.test(p.comm))?.[0];
    if (group === undefined) continue;
    const ticks = p.ticks - (before.processes.get(pid)?.ticks ?? 0);
    ms[group] = (ms[group] ?? 0) + (ticks * 10) / requests;
  }
  return ms;
}

/**
 * Shares (percent of all cores) between two snapshots. `api` are the API's top process ids (their
 * descendants count too); `worker` likewise, if a task worker ran.
 */
export function cpuShares(before: Snapshot, after: Snapshot, roles: { api: number[]; worker?: number[] }): string {
  const elapsed = after.total - before.total;
  if (elapsed <= 0) return 'CPU shares: no time elapsed';
  const api = descendants(roles.api, after.processes);
  const worker = descendants(roles.worker ?? [], after.processes);
  const used = new Map<string, number>();
  for (const [pid, p] of after.processes) {
    const ticks = p.ticks - (before.processes.get(pid)?.ticks ?? 0);
    if (ticks <= 0) continue;
    const group = api.has(pid)
      ? 'API'
      : worker.has(pid)
        ? 'task worker'
        : pid === process.pid
          ? 'load generator'
          : (GROUPS.find(([, pattern]) => pattern.test(p.comm))?.[0] ?? 'other');
    used.set(group, (used.get(group) ?? 0) + ticks);
  }
  const pct = (ticks: number) => `${((100 * ticks) / elapsed).toFixed(0)}%`;
  const order = ['API', 'database', 'broker', 'task worker', 'load generator', 'other'];
  const parts = order.filter((g) => used.has(g)).map((g) => `${g} ${pct(used.get(g) ?? 0)}`);
  return `CPU of all cores: ${parts.join(', ')}, idle ${pct(after.idle - before.idle)}`;
}
