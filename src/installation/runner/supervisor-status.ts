/**
 * The local runtime supervisor's status file (run/supervisor.json): what `local status`,
 * `ops/status` and the installer read to know which processes run and whether start-up finished.
 */
import { readFile } from 'node:fs/promises';
import { writeFileAtomic } from '../../pki/files.js';

export const LOCAL_SERVICES = ['database', 'broker', 'api', 'worker'] as const;
export type LocalServiceName = (typeof LOCAL_SERVICES)[number];

export interface ServiceProcessStatus {
  state: 'starting' | 'running' | 'restarting' | 'stopped' | 'failed';
  pid?: number;
  restarts: number;
  since: string;
  logFile: string;
  lastError?: string;
}

export interface SupervisorStatus {
  pid: number;
  startedAt: string;
  /** True once every service started at least once. */
  ready: boolean;
  stopping: boolean;
  /** Set when start-up failed for good; the supervisor then exits. */
  error?: string;
  services: Partial<Record<LocalServiceName, ServiceProcessStatus>>;
}

export async function readSupervisorStatus(file: string): Promise<SupervisorStatus | undefined> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as SupervisorStatus;
  } catch {
    return undefined;
  }
}

export async function writeSupervisorStatus(file: string, status: SupervisorStatus): Promise<void> {
  await writeFileAtomic(file, `${JSON.stringify(status, null, 2)}\n`, 0o644);
}

/** Whether the process runs (a zombie, exited but not yet collected, does not). */
export { isProcessAlive } from '../../local-services/processes.js';

export async function readPidFile(file: string): Promise<number | undefined> {
  try {
    const pid = Number((await readFile(file, 'utf8')).trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}
