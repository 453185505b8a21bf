/**
 * How the local runtime starts the service's own Node programs (supervisor, API, worker): this
 * Node binary running the compiled entry point dist/src/cli.js, one process each, with no loader
 * or compiler in between (ensureServiceBuild() in service-build.ts makes and refreshes the build
 * before the runtime starts).
 */
import { join } from 'node:path';
import { repositoryRoot } from '../layout.js';

export function cliCommand(...args: string[]): { command: string; args: string[]; cwd: string } {
  const root = repositoryRoot();
  return { command: process.execPath, args: [join(root, 'dist', 'src', 'cli.js'), ...args], cwd: root };
}

/** The environment of a service process: only what it needs, never the operator's whole shell. */
export function baseEnvironment(extra: Record<string, string>): NodeJS.ProcessEnv {
  const keep = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR', 'FERRETDB_BIN'];
  const env: NodeJS.ProcessEnv = {};
  for (const key of keep) if (process.env[key] !== undefined) env[key] = process.env[key];
  return { ...env, ...extra };
}
