/**
 * The compose runtime: compose.yaml at the top of the checkout, variables from
 * config/compose.env (paths, ports, image names; no secrets), one project per installation.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseEnv } from 'node:util';
import { COMPOSE_OVERRIDES_VARIABLE, TOPOLOGY_VARIABLE } from '../compose-files.js';
import { repositoryRoot, type InstallLayout } from '../layout.js';
import type { Topology } from '../install-config.js';
import { CLUSTER_COMPOSE_FILE, REPLICA_SET_SERVICES } from '../replica-set.js';
import { detectCompose, run, type ComposeCommand } from './compose-command.js';
import type { ProcessState, ServiceRuntime } from './service-runtime.js';

export const COMPOSE_SERVICES = ['proxy', 'api', 'worker', 'rabbitmq', 'mongo'] as const;
export const COMPOSE_PROJECT = 'cybercom';
const WAIT_TIMEOUT_S = 300;

export class ComposeRuntime implements ServiceRuntime {
  readonly kind = 'compose' as const;
  readonly services: readonly string[];
  private compose: ComposeCommand | undefined;

  constructor(
    private readonly layout: InstallLayout,
    topology: Topology = 'single',
  ) {
    this.services = topology === 'cluster' ? [...COMPOSE_SERVICES, ...REPLICA_SET_SERVICES] : COMPOSE_SERVICES;
  }

  composeFile(): string {
    return join(repositoryRoot(), 'compose.yaml');
  }

  /**
   * compose.yaml, compose.cluster.yaml for the cluster topology, then the override files recorded
   * in compose.env (CYBERCOM_COMPOSE_OVERRIDES), so a site's overrides apply to the cluster too.
   */
  async composeFiles(): Promise<string[]> {
    const env = await readFile(this.layout.composeEnvFile, 'utf8').then(
      (t) => parseEnv(t) as Record<string, string>,
      () => ({}) as Record<string, string>,
    );
    const overrides = (env[COMPOSE_OVERRIDES_VARIABLE] ?? '').split(':').filter((f) => f !== '');
    const topology = env[TOPOLOGY_VARIABLE] === 'cluster' ? [join(repositoryRoot(), CLUSTER_COMPOSE_FILE)] : [];
    return [this.composeFile(), ...topology, ...overrides];
  }

  private async base(): Promise<{ command: string; args: string[] }> {
    this.compose ??= await detectCompose();
    if (!this.compose) throw new Error('Docker Compose v2 not found (`docker compose version` failed)');
    const files = (await this.composeFiles()).flatMap((f) => ['-f', f]);
    return {
      command: this.compose.command,
      args: [...this.compose.prefix, '--ansi', 'never', ...files, '--env-file', this.layout.composeEnvFile, '-p', COMPOSE_PROJECT],
    };
  }

  /** `docker compose <args>`; throws with the command's output when it fails. */
  async composeRun(args: string[], onOutput?: (text: string) => void): Promise<string> {
    const { command, args: base } = await this.base();
    const result = await run(command, [...base, ...args], { onOutput });
    if (result.code !== 0)
      throw new Error(
        `${command} ${[...base.slice(-6), ...args].join(' ')} failed (exit ${result.code}):\n${(result.stderr || result.stdout).trim().slice(-4000)}`,
      );
    return result.stdout;
  }

  /** Official images pulled, ours built (multi-stage, from docker/ and worker-image/). */
  async prepareImages(onOutput?: (text: string) => void): Promise<void> {
    // Images that cannot be pulled (offline, or loaded with `docker load`) are used as present;
    // `up` still fails if one is missing.
    await this.composeRun(['pull', '--ignore-buildable', '--ignore-pull-failures', '--quiet'], onOutput);
    await this.composeRun(['build'], onOutput);
  }

  async isRunning(): Promise<boolean> {
    const states = await this.processStates().catch(() => []);
    return states.some((s) => s.state === 'running');
  }

  async startOrRestart(): Promise<void> {
    // Recreates containers whose configuration changed; the restart makes the others read
    // changed mounted files (certificates, definitions) too. --wait returns once all are healthy.
    const running = await this.isRunning();
    await this.composeRun(['up', '--detach', '--remove-orphans', '--wait', '--wait-timeout', String(WAIT_TIMEOUT_S)]);
    if (running) {
      await this.composeRun(['restart']);
      await this.composeRun(['up', '--detach', '--wait', '--wait-timeout', String(WAIT_TIMEOUT_S)]);
    }
  }

  async stop(): Promise<void> {
    await this.composeRun(['stop']);
  }

  async processStates(): Promise<ProcessState[]> {
    const out = await this.composeRun(['ps', '--all', '--format', 'json']);
    // Compose prints one JSON object per line (newer) or one array (older).
    const trimmed = out.trim();
    const rows: Array<{ Service?: string; State?: string; Health?: string; Status?: string }> = trimmed.startsWith('[')
      ? (JSON.parse(trimmed) as [])
      : trimmed
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line) as object);
    return this.services.map((service) => {
      const row = rows.find((r) => r.Service === service);
      return { service, state: row?.Health ? `${row.State ?? ''} (${row.Health})` : (row?.State ?? 'absent'), detail: row?.Status ?? '' };
    });
  }

  async logTail(service: string, lines: number): Promise<string> {
    return (await this.composeRun(['logs', '--no-color', '--tail', String(lines), service])).trimEnd();
  }

  async followLogs(service: string, lines: number): Promise<void> {
    await this.composeRun(['logs', '--no-color', '--follow', '--tail', String(lines), service], (text) => process.stdout.write(text));
  }

  async removeData(): Promise<void> {
    await this.composeRun(['down', '--volumes', '--remove-orphans']);
  }

  /** Runs a command in a running service's container. */
  async exec(service: string, command: string[], env: Record<string, string> = {}): Promise<string> {
    const envArgs = Object.keys(env).flatMap((key) => ['-e', key]);
    const { command: bin, args: base } = await this.base();
    const result = await run(bin, [...base, 'exec', '-T', ...envArgs, service, ...command], { env: { ...process.env, ...env } });
    if (result.code !== 0)
      throw new Error(`exec in ${service} failed (exit ${result.code}): ${(result.stderr || result.stdout).trim().slice(-2000)}`);
    return result.stdout;
  }
}
