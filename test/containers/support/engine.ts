/**
 * The container engine as the installer sees it: the Docker API at DOCKER_HOST (Podman's
 * Docker-compatible socket here) through dockerode, and the `docker compose` CLI. Commands run
 * with their output captured; a failure throws with the command line and the output's tail.
 */
import { spawn } from 'node:child_process';
import Docker from 'dockerode';

export const DEFAULT_DOCKER_HOST = 'unix:///run/podman/podman.sock';

export function dockerHost(): string {
  return process.env.DOCKER_HOST ?? DEFAULT_DOCKER_HOST;
}

/** dockerode on the same socket the `docker` CLI and compose use. */
export function docker(): Docker {
  const host = dockerHost();
  if (!host.startsWith('unix://')) throw new Error(`DOCKER_HOST must be a unix socket here, got ${host}`);
  return new Docker({ socketPath: host.slice('unix://'.length) });
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Kill the command after this long (it then counts as failed). */
  timeoutMs?: number;
  /** Resolve with the result instead of throwing on a non-zero exit. */
  allowFailure?: boolean;
  input?: string;
  /** Echo output lines as they come, prefixed (long steps show progress). */
  echo?: string;
}

function tail(text: string, lines = 40): string {
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}

export function run(command: string, args: string[], opts: RunOptions = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: opts.cwd,
      env: { ...process.env, DOCKER_HOST: dockerHost(), ...opts.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    const echo = (chunk: Buffer): void => {
      if (opts.echo === undefined) return;
      for (const line of chunk.toString().split('\n')) if (line.trim()) process.stdout.write(`${opts.echo}${line}\n`);
    };
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString();
      echo(c);
    });
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString();
      echo(c);
    });
    const timer = opts.timeoutMs ? setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs) : undefined;
    child.on('error', (err) => {
      if (timer) clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code, signal) => {
      if (timer) clearTimeout(timer);
      const result = { code: code ?? (signal ? 128 : 1), stdout, stderr };
      if (result.code !== 0 && !opts.allowFailure) {
        reject(new Error(`${command} ${args.join(' ')} exited with ${signal ?? code}\n${tail(stdout + stderr)}`));
      } else {
        resolve(result);
      }
    });
    // A command that exits without reading its input must not fail the caller with EPIPE.
    child.stdin.on('error', () => undefined);
    child.stdin.end(opts.input ?? '');
  });
}

export interface OneOffContainer {
  image: string;
  cmd: string[];
  /** host:container[:ro] bind mounts. */
  binds?: string[];
  network?: string;
  env?: Record<string, string>;
  workingDir?: string;
  user?: string;
  timeoutMs?: number;
}

/**
 * Runs a container to completion and returns its exit code and output. Through dockerode with an
 * explicit wait and remove, not `docker run --rm`: with Podman 4.3's Docker API the CLI's
 * `--rm` path reports exit code 0 whatever the container returned.
 */
export async function runToCompletion(spec: OneOffContainer): Promise<{ code: number; output: string }> {
  const api = docker();
  const container = await api.createContainer({
    Image: spec.image,
    Cmd: spec.cmd,
    WorkingDir: spec.workingDir,
    User: spec.user,
    Env: Object.entries(spec.env ?? {}).map(([k, v]) => `${k}=${v}`),
    HostConfig: { Binds: spec.binds ?? [], NetworkMode: spec.network },
  });
  try {
    await container.start();
    const timeout = spec.timeoutMs ?? 120_000;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${spec.cmd.join(' ')}: still running after ${timeout} ms`)), timeout);
    });
    const result = (await Promise.race([container.wait(), timedOut]).finally(() => clearTimeout(timer))) as { StatusCode: number };
    const logs = await container.logs({ stdout: true, stderr: true, follow: false });
    return { code: result.StatusCode, output: demux(logs) };
  } finally {
    await container.remove({ force: true }).catch(() => undefined);
  }
}

/** Docker's multiplexed log stream (8-byte frame headers) to text; plain text passes through. */
function demux(buf: Buffer): string {
  const parts: string[] = [];
  let i = 0;
  while (i + 8 <= buf.length && (buf[i] === 1 || buf[i] === 2) && buf[i + 1] === 0) {
    const len = buf.readUInt32BE(i + 4);
    parts.push(buf.subarray(i + 8, i + 8 + len).toString());
    i += 8 + len;
  }
  return i === 0 ? buf.toString() : parts.join('');
}
