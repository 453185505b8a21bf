/**
 * Helpers of the appliance tests: run ./installer and ops/* as an operator would (real
 * processes), on free ports in a temporary install directory, and talk to the installed API.
 */
import { spawn } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../../src/local-services/ports.js';

export const REPO = resolve(fileURLToPath(new URL('../../..', import.meta.url)));
export const ADMIN_PASSWORD = 'Correct-Horse-Battery-9';

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
  output: string;
}

/** Runs a repository executable (./installer, ops/...) to completion; `root`: another checkout's. */
export function runTool(tool: string, args: string[], env: NodeJS.ProcessEnv = {}, timeoutMs = 300_000, root = REPO): Promise<RunResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(join(root, tool), args, {
      cwd: root,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let output = '';
    child.stdout.on('data', (c: Buffer) => ((stdout += c.toString()), (output += c.toString())));
    child.stderr.on('data', (c: Buffer) => ((stderr += c.toString()), (output += c.toString())));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${tool} ${args.join(' ')} timed out after ${timeoutMs} ms:\n${output.slice(-3000)}`));
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolvePromise({ code: code ?? -1, stdout, stderr, output });
    });
  });
}

export interface TestInstall {
  dir: string;
  ports: { http: number; broker: number; db: number };
  api: string;
  passwordFile: string;
  /** The installer's arguments for this installation (add more per call). */
  args(...extra: string[]): string[];
  cleanup(): Promise<void>;
}

/**
 * A fresh temporary install directory and free ports; nothing installed yet. The prefix is this
 * suite's own: other suites on the machine sweep theirs (test/containers removes every
 * cybercom-e2e-* it finds), and must never sweep an installation a test is still running.
 */
export async function prepareInstall(name: string): Promise<TestInstall> {
  const parent = await mkdtemp(join(tmpdir(), `cybercom-it-${name}-`));
  // The broker runs as the `rabbitmq` user and must be able to walk into the install directory.
  await chmod(parent, 0o755);
  const dir = join(parent, 'install');
  // Three different ones: the kernel may hand out a port it just released again.
  const taken = new Set<number>();
  const distinctFreePort = async (): Promise<number> => {
    for (;;) {
      const port = await freePort();
      if (taken.has(port)) continue;
      taken.add(port);
      return port;
    }
  };
  const ports = { http: await distinctFreePort(), broker: await distinctFreePort(), db: await distinctFreePort() };
  const passwordFile = join(parent, 'admin-password');
  await writeFile(passwordFile, `${ADMIN_PASSWORD}\n`, { mode: 0o600 });
  return {
    dir,
    ports,
    api: `http://127.0.0.1:${ports.http}`,
    passwordFile,
    args: (...extra) => [
      '--dir',
      dir,
      '--http-port',
      String(ports.http),
      '--broker-port',
      String(ports.broker),
      '--db-port',
      String(ports.db),
      '--admin-password-file',
      passwordFile,
      ...extra,
    ],
    async cleanup() {
      await runTool('ops/services', ['stop', '--dir', dir]).catch(() => undefined);
      if (process.env.TEST_KEEP_STATE !== '1') await rm(parent, { recursive: true, force: true });
    },
  };
}

/** ./installer --yes for a prepared installation; throws with the output when it fails. */
export async function install(target: TestInstall, ...extra: string[]): Promise<RunResult> {
  const result = await runTool('installer', ['--yes', ...target.args(...extra)]);
  if (result.code !== 0) throw new Error(`installer exited ${result.code}:\n${result.output.slice(-6000)}`);
  return result;
}

export interface ApiAnswer {
  status: number;
  json: any;
  text: string;
}

export async function call(
  api: string,
  path: string,
  init: { method?: string; token?: string; bearer?: string; body?: unknown } = {},
): Promise<ApiAnswer> {
  const headers: Record<string, string> = { Accept: 'application/json', Host: 'localhost' };
  if (init.token) headers.Authorization = `Token ${init.token}`;
  if (init.bearer) headers.Authorization = `Bearer ${init.bearer}`;
  if (init.body !== undefined) headers['Content-Type'] = 'application/json';
  const response = await fetch(`${api}${path}`, {
    method: init.method ?? 'GET',
    headers,
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, json, text };
}

/** Logs in as the administrator (JWT) and returns the access token. */
export async function adminLogin(api: string, password = ADMIN_PASSWORD, username = 'admin'): Promise<string> {
  const answer = await call(api, '/api/token/', { method: 'POST', body: { username, password } });
  if (answer.status !== 200) throw new Error(`login failed: ${answer.status} ${answer.text}`);
  return answer.json.access as string;
}

export async function readText(path: string): Promise<string> {
  return readFile(path, 'utf8');
}
