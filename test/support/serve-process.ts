/**
 * The real `serve` command as a child process on a free port, against the suite's services (the
 * integration project's unless the caller passes others) and a fresh service database, for tests
 * of what only a whole process shows (several API processes, their restarts, their shared
 * answers, their broker failover). In its own process group, so a clean-up can reach the primary
 * and its workers, not only tsx.
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { request } from 'node:http';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../src/local-services/ports.js';
import { until } from './until.js';
import { serviceDatabaseName, TEST_SECRET_KEY } from './app.js';
import { testServices } from './services.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

/** One JSON log line of `serve` (the primary's or an API process's: `pid` says whose). */
export interface ServeLogLine {
  msg?: string;
  pid?: number;
  time?: string;
  /** "API server listening": where. */
  url?: string;
  /** "API process ready": which slot, and the API process's pid. */
  worker?: number;
  workerPid?: number;
  /** "broker connected": the broker address connected to. */
  node?: string | null;
  /** "request": the X-Request-Id and the answer's status. */
  reqId?: string;
  status?: number;
}

export interface ServeProcess {
  child: ChildProcessByStdio<null, Readable, Readable>;
  port: number;
  /** Every JSON log line it printed so far. */
  lines(): ServeLogLine[];
  /** Everything it printed so far (stdout and stderr), for failure messages. */
  output(): string;
  /** Its URL once it listens; rejects when it ends first or after `timeoutMs`. */
  listening(timeoutMs?: number): Promise<string>;
  /** SIGKILL to its whole process group (primary, API processes, tsx); resolves once it exited. */
  kill(): Promise<void>;
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
        // A caller outside the integration project (the broker cluster's tests) names its own.
        SERVICE_DATABASE: env.SERVICE_DATABASE ?? serviceDatabaseName(),
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
  const lines: ServeLogLine[] = [];
  let output = '';
  let pending = '';
  child.stdout.on('data', (chunk: Buffer) => {
    pending += chunk.toString();
    const complete = pending.split('\n');
    pending = complete.pop() ?? '';
    for (const line of complete) {
      output += `${line}\n`;
      try {
        lines.push(JSON.parse(line) as ServeLogLine);
      } catch {
        // not a log line
      }
    }
  });
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const ended = () => child.exitCode !== null || child.signalCode !== null;
  return {
    child,
    port,
    lines: () => lines,
    output: () => output,
    async listening(timeoutMs = 120_000) {
      return until(
        () => {
          if (ended()) throw new Error(`serve ended with ${child.exitCode ?? child.signalCode}; output:\n${output}`);
          return lines.find((l) => l.msg === 'API server listening')?.url;
        },
        timeoutMs,
        () => `serve to listen; output:\n${output}`,
      );
    },
    async kill() {
      if (child.pid === undefined || ended()) return;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
      await exited;
    },
  };
}

export interface NewConnectionAnswer {
  status: number;
  text: string;
}

/**
 * One request on a connection of its own (no keep-alive): with several API processes on one
 * port the kernel picks the process anew for each, and a failure belongs to exactly this
 * request. Never waits forever: after `timeoutMs` without an answer it rejects.
 */
export function requestOnNewConnection(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string; timeoutMs?: number } = {},
): Promise<NewConnectionAnswer> {
  const { method = 'GET', headers = {}, body, timeoutMs = 15_000 } = options;
  const sent = body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) };
  return new Promise((resolve, reject) => {
    const req = request(url, { method, agent: false, headers: { accept: 'application/json', ...sent } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer within ${timeoutMs / 1000} s`)));
    req.end(body);
  });
}
