/**
 * The files derived from install.json and secrets.env: the API's and the worker's env files, the
 * broker definitions and, for compose, compose.env. Written by the installer and again by
 * `ops/restore` (restored secrets on a possibly different directory or ports). Only changed files
 * are rewritten; the names of those written are returned.
 */
import { readFile } from 'node:fs/promises';
import { parseEnv } from 'node:util';
import { renderBrokerDefinitions } from './broker-definitions.js';
import { composeEnv } from './compose-files.js';
import { renderEnvFile, serviceEnv, workerEnv } from './env-files.js';
import type { InstallConfig } from './install-config.js';
import type { InstallLayout } from './layout.js';
import type { Secrets } from './secrets.js';
import { writeIfChanged } from './write-if-changed.js';

const HEADER = 'Written by the installer from install.json and secrets.env; re-run ./installer to change it.';

export async function writeDerivedConfig(
  layout: InstallLayout,
  config: InstallConfig,
  secrets: Secrets,
  environment: NodeJS.ProcessEnv,
): Promise<string[]> {
  const changed: string[] = [];
  if (await writeIfChanged(layout.brokerDefinitionsFile, renderBrokerDefinitions(secrets), 0o600))
    changed.push('rabbitmq-definitions.json');
  if (await writeIfChanged(layout.serviceEnvFile, renderEnvFile(serviceEnv(layout, config, secrets), HEADER), 0o600))
    changed.push('service.env');
  if (await writeIfChanged(layout.workerEnvFile, renderEnvFile(workerEnv(layout, config, secrets), HEADER), 0o600))
    changed.push('worker.env');
  if (config.runtime === 'compose') {
    const previous = await readFile(layout.composeEnvFile, 'utf8').then(
      (t) => parseEnv(t) as Record<string, string>,
      () => ({}),
    );
    const env = composeEnv(layout, config, environment, previous);
    if (
      await writeIfChanged(
        layout.composeEnvFile,
        renderEnvFile(env, 'Variables for compose.yaml, written by the installer (no secrets here).'),
        0o600,
      )
    )
      changed.push('compose.env');
  }
  return changed;
}
