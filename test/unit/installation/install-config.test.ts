import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultApiProcesses } from '../../../src/config/api-processes.js';
import { brokerDefinitions, rabbitPasswordHash } from '../../../src/installation/broker-definitions.js';
import { composeEnv } from '../../../src/installation/compose-files.js';
import { hostServiceEnv, renderEnvFile, serviceEnv, workerEnv } from '../../../src/installation/env-files.js';
import {
  CURRENT_CONFIG_VERSION,
  InstallConfigError,
  readPreviousAnswers,
  serializeInstallConfig,
  type InstallConfig,
} from '../../../src/installation/install-config.js';
import { installLayout } from '../../../src/installation/layout.js';
import { ensureSecrets, SECRET_KEYS } from '../../../src/installation/secrets.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cybercom-unit-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const config: InstallConfig = {
  configVersion: CURRENT_CONFIG_VERSION,
  runtime: 'local',
  admin: { username: 'admin', email: 'admin@example.org' },
  publicHost: 'data.example.org',
  https: 'none',
  acmeEmail: '',
  tlsCertFile: '',
  tlsKeyFile: '',
  allowedHosts: ['data.example.org', 'localhost'],
  debug: false,
  certValidityDays: 365,
  dataStoreAnonymous: true,
  catalogAnonymous: false,
  ports: { http: 80, https: 443, broker: 5671, database: 27017 },
  dbEngine: 'auto',
  certRenewal: 'none',
};

describe('secrets.env', () => {
  it('generates every secret once (0600) and keeps them on later runs', async () => {
    const file = join(dir, 'secrets.env');
    const first = await ensureSecrets(file);
    expect(first.generated).toEqual([...SECRET_KEYS]);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const bytes = await readFile(file);
    const second = await ensureSecrets(file);
    expect(second.generated).toEqual([]);
    expect(second.secrets).toEqual(first.secrets);
    expect(await readFile(file)).toEqual(bytes);
    expect(first.secrets.SECRET_KEY).toMatch(/^[0-9a-f]{64}$/);
  });

  it('fills in only what is missing', async () => {
    const file = join(dir, 'partial.env');
    await writeFile(file, 'SECRET_KEY=abc\n');
    const { secrets, generated } = await ensureSecrets(file);
    expect(secrets.SECRET_KEY).toBe('abc');
    expect(generated).not.toContain('SECRET_KEY');
  });
});

describe('install.json', () => {
  it('serializes stably and reads back as the previous answers', async () => {
    const file = join(dir, 'install.json');
    await writeFile(file, serializeInstallConfig(config));
    expect(serializeInstallConfig(config)).toBe(await readFile(file, 'utf8'));
    expect(await readPreviousAnswers(file)).toEqual(Object.fromEntries(Object.entries(config).filter(([k]) => k !== 'configVersion')));
  });

  it('keeps the valid keys of a damaged or older file and refuses a newer version', async () => {
    const file = join(dir, 'old.json');
    await writeFile(file, JSON.stringify({ runtime: 'local', debug: 'perhaps', certValidityDays: 90 }));
    expect(await readPreviousAnswers(file)).toEqual({ runtime: 'local', certValidityDays: 90 });
    await writeFile(file, JSON.stringify({ configVersion: CURRENT_CONFIG_VERSION + 1 }));
    await expect(readPreviousAnswers(file)).rejects.toBeInstanceOf(InstallConfigError);
  });
});

describe('rendered configuration', () => {
  const secrets = Object.fromEntries(SECRET_KEYS.map((k) => [k, `${k.toLowerCase()}-value`])) as Record<
    (typeof SECRET_KEYS)[number],
    string
  >;
  const layout = installLayout('/srv/cybercom');

  it('gives the API and the worker separate identities, host paths locally and container paths in compose', () => {
    const api = serviceEnv(layout, config, secrets);
    const worker = workerEnv(layout, config, secrets);
    expect(api).toMatchObject({
      MONGO_USERNAME: 'cybercom-api',
      BROKER_USERNAME: 'cybercom-api',
      MONGO_TLS_CERT_KEY_FILE: '/srv/cybercom/certs/api-combined.pem',
      HTTP_HOST: '0.0.0.0',
      DATA_STORE_ANONYMOUS: 'true',
      TRUST_PROXY: 'false',
    });
    expect(worker).toMatchObject({
      MONGO_USERNAME: 'cybercom-worker',
      BROKER_PASSWORD: 'broker_worker_password-value',
      BROKER_TLS_KEY_FILE: '/srv/cybercom/certs/worker.key',
    });
    const composeApi = serviceEnv(layout, { ...config, runtime: 'compose' }, secrets);
    expect(composeApi).toMatchObject({
      MONGO_URI: 'mongodb://mongo:27017/',
      BROKER_URL: 'amqps://rabbitmq:5671/cybercom',
      HTTP_PORT: '8080',
      TRUST_PROXY: 'true',
      MONGO_TLS_CA_FILE: '/run/cybercom/tls/ca.pem',
    });
  });

  it('points the API at the private store only on the local runtime with FerretDB, where the engine has no roles', () => {
    const ferret = serviceEnv(layout, { ...config, dbEngine: 'ferretdb' }, secrets);
    expect(ferret).toMatchObject({
      PRIVATE_MONGO_URI: 'mongodb://%2Fsrv%2Fcybercom%2Fdata%2Fprivate-database%2Fsocket%2Fferretdb.sock/',
      PRIVATE_MONGO_USERNAME: 'cybercom-api',
      PRIVATE_MONGO_PASSWORD: 'db_private_api_password-value', // not the main engine's password
    });
    // The workers are never told about it.
    expect(Object.keys(workerEnv(layout, { ...config, dbEngine: 'ferretdb' }, secrets)).filter((k) => k.startsWith('PRIVATE_'))).toEqual(
      [],
    );
    for (const other of [
      serviceEnv(layout, { ...config, dbEngine: 'mongod' }, secrets),
      serviceEnv(layout, { ...config, runtime: 'compose', dbEngine: 'ferretdb' }, secrets),
    ]) {
      expect(Object.keys(other).filter((k) => k.startsWith('PRIVATE_'))).toEqual([]);
    }
    // The host's view of a compose installation (installer steps) keeps compose's single engine.
    const hostView = hostServiceEnv(layout, { ...config, runtime: 'compose', dbEngine: 'ferretdb' }, secrets);
    expect(hostView.MONGO_URI).toBe(`mongodb://localhost:${config.ports.database}/`);
    expect(hostView.PRIVATE_MONGO_URI).toBeUndefined();
  });

  it('runs --api-processes API processes locally, and as many one-process API containers in compose', () => {
    expect(serviceEnv(layout, { ...config, apiProcesses: 3 }, secrets).API_PROCESSES).toBe('3');
    expect(serviceEnv(layout, { ...config, runtime: 'compose', apiProcesses: 3 }, secrets).API_PROCESSES).toBe('1');
    expect(composeEnv(layout, { ...config, runtime: 'compose', apiProcesses: 3 }, {}).API_REPLICAS).toBe('3');
    // install.json from before the option: the machine's default.
    expect(serviceEnv(layout, config, secrets).API_PROCESSES).toBe(String(defaultApiProcesses()));
    expect(composeEnv(layout, { ...config, runtime: 'compose' }, {}).API_REPLICAS).toBe(String(defaultApiProcesses()));
  });

  it('writes env files that quote only what needs quoting and refuse line breaks', () => {
    expect(renderEnvFile({ A: 'plain/value', B: 'with space' }, 'h')).toBe('# h\nA=plain/value\nB="with space"\n');
    expect(() => renderEnvFile({ A: 'x\ny' }, 'h')).toThrow(/line breaks/);
  });

  it('hashes broker passwords the way RabbitMQ does, deterministically', () => {
    const salt = Buffer.from([1, 2, 3, 4]);
    const hash = Buffer.from(rabbitPasswordHash('s3cret', salt), 'base64');
    expect(hash.subarray(0, 4)).toEqual(salt);
    expect(hash.subarray(4)).toEqual(
      createHash('sha256')
        .update(Buffer.concat([salt, Buffer.from('s3cret')]))
        .digest(),
    );
    const definitions = brokerDefinitions(secrets) as {
      users: Array<{ name: string; tags: string }>;
      permissions: Array<{ user: string; vhost: string }>;
    };
    expect(definitions.users.map((u) => u.name)).toEqual(['cybercom-admin', 'cybercom-api', 'cybercom-worker']);
    expect(JSON.stringify(brokerDefinitions(secrets))).toBe(JSON.stringify(definitions));
    expect(JSON.stringify(definitions)).not.toContain('value');
  });
});
