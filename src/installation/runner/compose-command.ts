/**
 * Finding and running Docker Compose (v2: `docker compose`, or a standalone `docker-compose` of
 * version 2). Podman works through its Docker-compatible API (DOCKER_HOST) with the same commands.
 */
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

export const MIN_COMPOSE_VERSION = '2.20.0';

export interface ComposeCommand {
  command: string;
  /** Arguments before the compose sub-command (`compose` for the plugin). */
  prefix: string[];
  version: string;
}

export function compareVersions(a: string, b: string): number {
  const parse = (v: string): number[] =>
    v
      .replace(/^v/, '')
      .split(/[.+-]/)
      .slice(0, 3)
      .map((n) => Number.parseInt(n, 10) || 0);
  const [x, y] = [parse(a), parse(b)];
  for (let i = 0; i < 3; i++) {
    const diff = (x[i] ?? 0) - (y[i] ?? 0);
    if (diff !== 0) return diff;
  }
  return 0;
}

async function versionOf(command: string, args: string[]): Promise<string | undefined> {
  try {
    const { stdout } = await execFileAsync(command, [...args, 'version', '--short'], { timeout: 15_000 });
    const version = stdout.trim().replace(/^v/, '');
    return /^\d+\.\d+/.test(version) ? version : undefined;
  } catch {
    return undefined;
  }
}

/** The newest Compose found, or undefined. */
export async function detectCompose(): Promise<ComposeCommand | undefined> {
  const candidates: ComposeCommand[] = [];
  const plugin = await versionOf('docker', ['compose']);
  if (plugin) candidates.push({ command: 'docker', prefix: ['compose'], version: plugin });
  const standalone = await versionOf('docker-compose', []);
  if (standalone) candidates.push({ command: 'docker-compose', prefix: [], version: standalone });
  candidates.sort((a, b) => compareVersions(b.version, a.version));
  return candidates[0];
}

/** The engine's version, which also proves the daemon is reachable and we may use it. */
export async function detectEngine(): Promise<{ version: string } | { error: string }> {
  try {
    const { stdout } = await execFileAsync('docker', ['version', '--format', '{{.Server.Version}}'], { timeout: 15_000 });
    return { version: stdout.trim() };
  } catch (err) {
    const text = (err as { stderr?: string }).stderr?.trim() || (err as Error).message;
    return { error: text.split('\n')[0] ?? text };
  }
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command; output is collected (and passed to onOutput as it arrives). */
export function run(
  command: string,
  args: string[],
  opts: { onOutput?: (text: string) => void; env?: NodeJS.ProcessEnv; input?: string } = {},
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      env: opts.env ?? process.env,
      stdio: [opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      opts.onOutput?.(chunk.toString());
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      opts.onOutput?.(chunk.toString());
    });
    if (opts.input !== undefined) child.stdin?.end(opts.input);
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
  });
}
