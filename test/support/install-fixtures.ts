/**
 * An installation's configuration and secrets as the installer would have written them, for
 * tests of the files generated from them: a compose install on a single node by default.
 */
import { CURRENT_CONFIG_VERSION, type InstallConfig } from '../../src/installation/install-config.js';
import type { Secrets } from '../../src/installation/secrets.js';

export function composeInstallConfig(overrides: Partial<InstallConfig> = {}): InstallConfig {
  return {
    configVersion: CURRENT_CONFIG_VERSION,
    runtime: 'compose',
    admin: { username: 'admin', email: 'admin@example.org' },
    publicHost: '',
    https: 'none',
    acmeEmail: '',
    tlsCertFile: '',
    tlsKeyFile: '',
    allowedHosts: ['localhost'],
    debug: false,
    certValidityDays: 365,
    dataStoreAnonymous: false,
    catalogAnonymous: false,
    ports: { http: 80, https: 443, broker: 5671, database: 27017 },
    dbEngine: 'auto',
    certRenewal: 'none',
    ...overrides,
  };
}

export const TEST_SECRETS: Secrets = {
  SECRET_KEY: 'k',
  DB_ADMIN_PASSWORD: 'admin-pw',
  DB_API_PASSWORD: 'api-pw',
  DB_WORKER_PASSWORD: 'worker-pw',
  DB_PRIVATE_API_PASSWORD: 'private-api-pw',
  BROKER_ADMIN_PASSWORD: 'b1',
  BROKER_API_PASSWORD: 'b2',
  BROKER_WORKER_PASSWORD: 'b3',
};
