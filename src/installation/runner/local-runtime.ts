/**
 * The local runtime from the outside: starts the supervisor (`cybercom local run`) in the
 * background, detached from the terminal, and talks to it through its pid file and status file.
 */
import { spawn } from 'node:child_process';
import { closeSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { openLogFile } from '../../local-services/service-logs.js';
import { isGroupAlive, waitForGroupExit } from '../../local-services/processes.js';
import type { InstallLayout } from '../layout.js';
import { followFile, tailFile } from './log-files.js';
import { baseEnvironment, cliCommand } from './node-command.js';
import { ensureServiceBuild } from './service-build.js';
import type { ProcessState, ServiceRuntime } from './service-runtime.js';
import { LOCAL_SERVICES, isProcessAlive, readPidFile, readSupervisorStatus, type LocalServiceName } from './supervisor-status.js';

const START_TIMEOUT_MS = 240_000;
const STOP_TIMEOUT_MS = 90_000;
/**
 * After the supervisor is gone, how long its services' process groups may take to follow: none
 * after an ordered stop; after a SIGKILL their watchdogs terminate them (SIGTERM, SIGKILL 10 s later).
 */
const SERVICES_GONE_TIMEOUT_MS = 20_000;

/** process.kill, except that a process that is already gone is fine. */
function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}

export class LocalRuntime implements ServiceRuntime {
  readonly kind = 'local' as const;
  readonly services = [...LOCAL_SERVICES, 'supervisor'] as const;

  constructor(private readonly layout: InstallLayout) {}

  async supervisorPid(): Promise<number | undefined> {
    const pid = await readPidFile(this.layout.supervisorPidFile);
    return pid !== undefined && isProcessAlive(pid) ? pid : undefined;
  }

  async isRunning(): Promise<boolean> {
    return (await this.supervisorPid()) !== undefined;
  }

  /** A restart starts the new supervisor only once the old one and every service it ran are gone. */
  async startOrRestart(): Promise<void> {
    if (await this.isRunning()) await this.stop();
    await this.start();
  }

  /** Launches the supervisor and waits until every service started (or start-up failed). */
  async start(timeoutMs = START_TIMEOUT_MS): Promise<void> {
    if (await this.isRunning()) return;
    await mkdir(this.layout.logsDir, { recursive: true, mode: 0o750 });
    await mkdir(this.layout.runDir, { recursive: true, mode: 0o750 });
    await rm(this.layout.supervisorStatusFile, { force: true });
    // The services run compiled JavaScript; an edited or upgraded checkout is compiled again first.
    await ensureServiceBuild();
    const { command, args, cwd } = cliCommand('local', 'run', '--dir', this.layout.root);
    const logFd = openLogFile(this.layout.supervisorLog);
    let child;
    try {
      child = spawn(command, args, {
        cwd,
        detached: true,
        stdio: ['ignore', logFd, logFd],
        env: baseEnvironment({ NODE_ENV: 'production' }),
      });
    } finally {
      closeSync(logFd);
    }
    const pid = child.pid;
    child.unref();
    if (pid === undefined) throw new Error('could not start the local supervisor');
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      await sleep(500);
      const status = await readSupervisorStatus(this.layout.supervisorStatusFile);
      if (status?.pid === pid && status.ready) return;
      if (status?.pid === pid && status.error) {
        const report = await this.failureReport(status.error);
        // The supervisor is now stopping what it had started, and services that were still
        // starting side by side with the one that failed (a broker takes seconds to boot) are
        // stopped only once they are up: return once all of it is gone, so that the caller (or
        // an operator's next command) never meets a supervisor still holding ports and files.
        await this.stop();
        throw new Error(report);
      }
      if (!isProcessAlive(pid)) throw new Error(await this.failureReport('the supervisor exited during start-up'));
      if (Date.now() > deadline) {
        throw new Error(await this.failureReport(`services not started after ${Math.round(timeoutMs / 1000)} s`));
      }
    }
  }

  private async failureReport(reason: string): Promise<string> {
    const status = await readSupervisorStatus(this.layout.supervisorStatusFile);
    const failing = Object.entries(status?.services ?? {}).filter(([, s]) => s.state !== 'running');
    const parts = [reason];
    for (const [name, s] of failing) {
      parts.push(`--- ${name} (${s.state}) ${s.logFile} ---`, await tailFile(s.logFile, 30));
    }
    parts.push(`--- supervisor ${this.layout.supervisorLog} ---`, await tailFile(this.layout.supervisorLog, 20));
    return parts.join('\n');
  }

  /**
   * Stops the supervisor and returns once it and every service process it ran are gone (their
   * ports free, their files closed), so a restart or a data removal never overlaps with them.
   */
  async stop(): Promise<void> {
    const pid = await this.supervisorPid();
    if (pid === undefined) return;
    // The process groups of its services, read before the stop (which clears them from the status).
    const status = await readSupervisorStatus(this.layout.supervisorStatusFile);
    const groups = status?.pid === pid ? Object.values(status.services).flatMap((s) => (s?.pid ? [s.pid] : [])) : [];
    signal(pid, 'SIGUSR2'); // ordered stop: worker, API, broker, database; the supervisor exits last
    const deadline = Date.now() + STOP_TIMEOUT_MS;
    while (isProcessAlive(pid)) {
      if (Date.now() > deadline) {
        signal(pid, 'SIGKILL');
        break;
      }
      await sleep(300);
    }
    const servicesDeadline = Date.now() + SERVICES_GONE_TIMEOUT_MS;
    for (const pgid of groups) {
      if (await waitForGroupExit(pgid, servicesDeadline, 300)) continue;
      signal(-pgid, 'SIGKILL');
      await waitForGroupExit(pgid, Date.now() + 5000, 100);
    }
    const left = groups.filter(isGroupAlive);
    if (left.length > 0) throw new Error(`the local services did not stop: process groups ${left.join(', ')} are still running`);
    if ((await readPidFile(this.layout.supervisorPidFile)) === pid) await rm(this.layout.supervisorPidFile, { force: true });
  }

  async processStates(): Promise<ProcessState[]> {
    const pid = await this.supervisorPid();
    const status = await readSupervisorStatus(this.layout.supervisorStatusFile);
    const states: ProcessState[] = [
      { service: 'supervisor', state: pid ? 'running' : 'stopped', detail: pid ? `pid ${pid}` : 'not running' },
    ];
    for (const name of LOCAL_SERVICES) {
      const s = pid && status?.pid === pid ? status.services[name] : undefined;
      states.push({
        service: name,
        state: s?.state ?? 'stopped',
        detail: s ? [s.pid ? `pid ${s.pid}` : '', `restarts ${s.restarts}`, s.lastError ?? ''].filter(Boolean).join(', ') : '',
      });
    }
    return states;
  }

  logFile(service: string): string {
    if (service === 'supervisor') return this.layout.supervisorLog;
    if (service === 'install') return this.layout.installLog;
    if (service === 'api' || service === 'worker') return join(this.layout.logsDir, `${service}.log`);
    if (service === 'broker') return join(this.layout.brokerDir, 'rabbitmq.log');
    if (service === 'database') return join(this.layout.databaseDir, 'ferretdb.log');
    throw new Error(`unknown service "${service}" (one of ${[...this.services, 'install'].join(', ')})`);
  }

  /** The database log is ferretdb.log or mongod.log, whichever the supervisor recorded. */
  private async resolveLogFile(service: string): Promise<string> {
    const status = await readSupervisorStatus(this.layout.supervisorStatusFile);
    const recorded = status?.services[service as LocalServiceName]?.logFile;
    return recorded || this.logFile(service);
  }

  async logTail(service: string, lines: number): Promise<string> {
    return tailFile(await this.resolveLogFile(service), lines);
  }

  async followLogs(service: string, lines: number): Promise<void> {
    await followFile(await this.resolveLogFile(service), lines, (text) => process.stdout.write(text));
  }

  async removeData(): Promise<void> {
    if (await this.isRunning()) throw new Error('stop the services before removing their data');
    await rm(this.layout.dataDir, { recursive: true, force: true });
  }
}
