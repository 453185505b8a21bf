/**
 * The real `serve` command as a child process on a free port, against the suite's services (the
 * integration project's unless the caller passes others) and a fresh service database, for tests
 * of what only a whole process shows (several API processes, their restarts, their shared
 * answers, their broker failover). In its own process group, so a clean-up can reach the primary
 * and its workers, not only tsx.
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../src/runtime/local/ports.js';
import { TEST_SECRET_KEY, uniqueName } from './app.js';
import { testServices } from './services.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

export interface ServeProcess {
  child: ChildProcessByStdio<null, Readable, Readable>;
  port: number;
}

/**
 * `env` is applied last; `services` are the connection variables (MONGO_*, BROKER_*), by default
 * those of the integration project's global setup.
 */
export async function spawnServe(
  env: Record<string, string>,
  services: Record<string, string> = testServices().env,
): Promise<ServeProcess> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [fileURLToPath(new URL('../../node_modules/tsx/dist/cli.mjs', import.meta.url)), 'src/cli.ts', 'serve'],
    {
      cwd: repoRoot,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '/tmp',
        ...services,
        SECRET_KEY: TEST_SECRET_KEY,
        SERVICE_DATABASE: uniqueName('svc_'),
        ALLOWED_HOSTS: '127.0.0.1,localhost',
        HTTP_HOST: '127.0.0.1',
        HTTP_PORT: String(port),
        LOG_LEVEL: 'info',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    },
  );
  return { child, port };
}
