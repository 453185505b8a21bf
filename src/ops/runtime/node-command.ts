/**
 * How the local runtime starts the service's own Node programs (API, worker, installer helpers):
 * this Node binary with tsx's loader and the repository's src/cli.ts, one process each (no tsx
 * wrapper process in between, so signals reach the program directly).
 */
import { join } from 'node:path';
import { repositoryRoot } from '../appliance/layout.js';

export function cliCommand(...args: string[]): { command: string; args: string[]; cwd: string } {
  const root = repositoryRoot();
  const loader = import.meta.resolve('tsx');
  return { command: process.execPath, args: ['--import', loader, join(root, 'src', 'cli.ts'), ...args], cwd: root };
}

/** The environment of a service process: only what it needs, never the operator's whole shell. */
export function baseEnvironment(extra: Record<string, string>): NodeJS.ProcessEnv {
  const keep = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR', 'FERRETDB_BIN'];
  const env: NodeJS.ProcessEnv = {};
  for (const key of keep) if (process.env[key] !== undefined) env[key] = process.env[key];
  return { ...env, ...extra };
}
