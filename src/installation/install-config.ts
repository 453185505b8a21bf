/**
 * The installation's answers (everything the operator chose, no secrets), kept in
 * config/install.json. A re-run reads it back as the defaults, so an upgrade keeps every choice.
 * The file carries a version; older files are migrated step by step when they are read.
 */
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { MAX_API_PROCESSES, defaultApiProcesses } from '../config/api-processes.js';

export const CURRENT_CONFIG_VERSION = 1;

export const RUNTIMES = ['compose', 'local'] as const;
export type RuntimeKind = (typeof RUNTIMES)[number];
export const HTTPS_MODES = ['none', 'acme', 'files'] as const;
export const DB_ENGINES = ['auto', 'mongod', 'ferretdb'] as const;
export const CERT_RENEWAL_MODES = ['none', 'auto', 'systemd', 'cron'] as const;
/** single: one database and one broker node. cluster (compose only): a three-member MongoDB replica set and a three-node RabbitMQ cluster. */
export const TOPOLOGIES = ['single', 'cluster'] as const;
export type Topology = (typeof TOPOLOGIES)[number];

const port = z.number().int().min(1).max(65535);

export const installConfigSchema = z
  .object({
    configVersion: z.literal(CURRENT_CONFIG_VERSION),
    runtime: z.enum(RUNTIMES),
    admin: z.object({ username: z.string().min(1), email: z.string() }),
    /** '' = local install over plain HTTP. */
    publicHost: z.string(),
    https: z.enum(HTTPS_MODES),
    acmeEmail: z.string(),
    tlsCertFile: z.string(),
    tlsKeyFile: z.string(),
    allowedHosts: z.array(z.string().min(1)).min(1),
    debug: z.boolean(),
    certValidityDays: z.number().int().min(1).max(3650),
    dataStoreAnonymous: z.boolean(),
    catalogAnonymous: z.boolean(),
    ports: z.object({ http: port, https: port, broker: port, database: port }),
    /** Local runtime: which MongoDB-wire server to run. */
    dbEngine: z.enum(DB_ENGINES),
    certRenewal: z.enum(CERT_RENEWAL_MODES),
    /**
     * Absent means single: installations from before the option have no key, and a single-node
     * install keeps writing none, so its install.json stays byte for byte what it was.
     */
    topology: z.enum(TOPOLOGIES).optional(),
    /**
     * API processes (compose: API containers). Absent (installations from before the option):
     * as many as the machine has cores, what the installer offers by default.
     */
    apiProcesses: z.number().int().min(1).max(MAX_API_PROCESSES).optional(),
  })
  .strict();

export type InstallConfig = z.infer<typeof installConfigSchema>;

/**
 * One function per version step (`n` turns a version-n object into version n+1). There is no
 * older format yet; when a release changes the meaning of a key, its step goes here. Keys that a
 * release merely adds need no step: the installer fills every key missing from an older file with
 * its default (see readPreviousAnswers).
 */
const MIGRATIONS: Record<number, (old: Record<string, unknown>) => Record<string, unknown>> = {};

export class InstallConfigError extends Error {}

/** Brings a parsed install.json of any known version to the current one. */
export function migrateInstallConfig(raw: unknown): { config: InstallConfig; migratedFrom?: number } {
  if (typeof raw !== 'object' || raw === null) throw new InstallConfigError('install.json does not hold an object');
  let current = raw as Record<string, unknown>;
  const start = typeof current.configVersion === 'number' ? current.configVersion : 1;
  if (start > CURRENT_CONFIG_VERSION) {
    throw new InstallConfigError(
      `install.json has configVersion ${start}, newer than this installer (${CURRENT_CONFIG_VERSION}): update the checkout`,
    );
  }
  for (let version = start; version < CURRENT_CONFIG_VERSION; version++) {
    const step = MIGRATIONS[version];
    if (!step) throw new InstallConfigError(`no migration from configVersion ${version}`);
    current = step(current);
  }
  const parsed = installConfigSchema.safeParse(current);
  if (!parsed.success) {
    throw new InstallConfigError(
      `install.json is invalid: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  }
  return start === CURRENT_CONFIG_VERSION ? { config: parsed.data } : { config: parsed.data, migratedFrom: start };
}

export async function readInstallConfig(file: string): Promise<{ config: InstallConfig; migratedFrom?: number } | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  return migrateInstallConfig(JSON.parse(text));
}

/**
 * The previous installation's answers for use as defaults: migrated to the current version, each
 * key kept only when it is valid on its own, so a file from an older release (missing keys) or a
 * hand-edited one (a broken key) still gives every answer that can be reused.
 */
export async function readPreviousAnswers(file: string): Promise<Partial<InstallConfig> | undefined> {
  let raw: unknown;
  try {
    raw = JSON.parse(await readFile(file, 'utf8'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    if (err instanceof SyntaxError) throw new InstallConfigError(`${file} is not valid JSON: ${err.message}`);
    throw err;
  }
  if (typeof raw !== 'object' || raw === null) throw new InstallConfigError(`${file} does not hold an object`);
  let current = raw as Record<string, unknown>;
  const start = typeof current.configVersion === 'number' ? current.configVersion : CURRENT_CONFIG_VERSION;
  if (start > CURRENT_CONFIG_VERSION) {
    throw new InstallConfigError(
      `${file} has configVersion ${start}, newer than this installer (${CURRENT_CONFIG_VERSION}): update the checkout`,
    );
  }
  for (let version = start; version < CURRENT_CONFIG_VERSION; version++) {
    const step = MIGRATIONS[version];
    if (!step) throw new InstallConfigError(`no migration from configVersion ${version}`);
    current = step(current);
  }
  const answers: Record<string, unknown> = {};
  for (const [key, schema] of Object.entries(installConfigSchema.shape)) {
    if (key === 'configVersion' || !(key in current)) continue;
    const parsed = (schema as z.ZodType).safeParse(current[key]);
    if (parsed.success) answers[key] = parsed.data;
  }
  return answers as Partial<InstallConfig>;
}

export async function loadInstallConfig(file: string): Promise<InstallConfig> {
  const found = await readInstallConfig(file);
  if (!found) throw new InstallConfigError(`${file} not found: run ./installer first (or pass --dir)`);
  return found.config;
}

/** Stable key order and formatting, so an unchanged configuration is rewritten byte-identically. */
export function serializeInstallConfig(config: InstallConfig): string {
  return `${JSON.stringify(installConfigSchema.parse(config), null, 2)}\n`;
}

export function apiProcessesOf(config: Pick<InstallConfig, 'apiProcesses'>): number {
  return config.apiProcesses ?? defaultApiProcesses();
}

export function topologyOf(config: Pick<InstallConfig, 'topology'>): Topology {
  return config.topology ?? 'single';
}

/** The URL users reach the API at. */
export function publicBaseUrl(config: InstallConfig): string {
  const host = config.publicHost === '' ? 'localhost' : config.publicHost;
  const bracketed = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  if (config.publicHost !== '' && config.https !== 'none') {
    return config.ports.https === 443 ? `https://${bracketed}` : `https://${bracketed}:${config.ports.https}`;
  }
  return config.ports.http === 80 ? `http://${bracketed}` : `http://${bracketed}:${config.ports.http}`;
}
