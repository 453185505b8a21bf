/**
 * The cluster topology's generated configuration: the connection strings (as the driver parses
 * them), the keyFile, the per-service files and compose.env, the database certificate's member
 * names, and the compose files the runtime layers. And the single node's: nothing of the cluster,
 * the same files an install.json without the key (every installation before the option) gives.
 */
import { X509Certificate } from 'node:crypto';
import { cp, mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseEnv } from 'node:util';
import { MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureCertificates } from '../../../src/installation/certificates.js';
import { composeEnv, writeComposeServiceFiles } from '../../../src/installation/compose-files.js';
import { writeDerivedConfig } from '../../../src/installation/derived-config.js';
import { serviceEnv, workerEnv } from '../../../src/installation/env-files.js';
import { serializeInstallConfig, topologyOf, type InstallConfig } from '../../../src/installation/install-config.js';
import { installLayout } from '../../../src/installation/layout.js';
import {
  ensureKeyFile,
  generateKeyFile,
  isValidKeyFile,
  publishedMemberUri,
  REPLICA_SET_MEMBERS,
  REPLICA_SET_NAME,
  replicaSetUri,
} from '../../../src/installation/replica-set.js';
import { remoteWorkerEnv } from '../../../src/ops/commands/bundle-parts.js';
import { COMPOSE_SERVICES, ComposeRuntime } from '../../../src/installation/runner/compose-runtime.js';
import { composeInstallConfig, TEST_SECRETS } from '../../support/install-fixtures.js';

const KEY_BITS = 1024;
let dir: string;
let certs: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cybercom-replica-set-'));
  certs = join(dir, 'certs');
  // 1024-bit keys (nothing here is about the keys): six RSA keys and signatures take a second or
  // two at 2048 bits alone, many more beside other CPU-bound files.
  await ensureCertificates(certs, { publicHost: '', validityDays: 365, keyBits: KEY_BITS });
}, 60_000);
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const single = composeInstallConfig();
const cluster = composeInstallConfig({ topology: 'cluster' });
const secrets = TEST_SECRETS;

/** What the driver makes of a connection string (parsed only; nothing is dialled). */
function parsed(uri: string) {
  const options = new MongoClient(uri).options;
  return {
    hosts: options.hosts.map((h) => h.toString()),
    replicaSet: options.replicaSet,
    w: options.writeConcern?.w,
    retryWrites: options.retryWrites,
    retryReads: options.retryReads,
    directConnection: options.directConnection,
  };
}

/** An install directory with the shared certificates, fresh per call. */
async function installDir(name: string) {
  const layout = installLayout(join(dir, name));
  await mkdir(layout.configDir, { recursive: true });
  await cp(certs, layout.certsDir, { recursive: true });
  return layout;
}

async function filesUnder(root: string): Promise<Record<string, { mode: number; text: string }>> {
  const out: Record<string, { mode: number; text: string }> = {};
  for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    out[path.slice(root.length)] = { mode: (await stat(path)).mode & 0o777, text: await readFile(path, 'utf8') };
  }
  return out;
}

describe('connection strings', () => {
  it('list the three members with the replica set, majority writes and retryable reads and writes', () => {
    expect(parsed(replicaSetUri())).toEqual({
      hosts: ['mongo:27017', 'mongo-2:27017', 'mongo-3:27017'],
      replicaSet: REPLICA_SET_NAME,
      w: 'majority',
      retryWrites: true,
      retryReads: true,
      directConnection: false,
    });
    // Spelled out, not left to the driver's defaults.
    expect(replicaSetUri()).toMatch(/[?&]retryWrites=true(&|$)/);
    expect(replicaSetUri()).toMatch(/[?&]retryReads=true(&|$)/);
  });

  it('give the API and the local worker the replica set in the cluster topology, one member otherwise', () => {
    const layout = installLayout(join(dir, 'env'));
    expect(serviceEnv(layout, cluster, secrets).MONGO_URI).toBe(replicaSetUri());
    expect(workerEnv(layout, cluster, secrets).MONGO_URI).toBe(replicaSetUri());
    expect(serviceEnv(layout, single, secrets).MONGO_URI).toBe('mongodb://mongo:27017/');
    expect(workerEnv(layout, { ...single, topology: 'single' }, secrets).MONGO_URI).toBe('mongodb://mongo:27017/');
    expect(parsed(serviceEnv(layout, single, secrets).MONGO_URI!)).toMatchObject({ w: undefined, replicaSet: undefined });
  });

  it("give the host's view of a cluster (the installer's administrator step) the published member directly", () => {
    const layout = installLayout(join(dir, 'env'));
    const hostView = serviceEnv(layout, { ...cluster, runtime: 'local', ports: { ...cluster.ports, database: 27018 } }, secrets).MONGO_URI!;
    expect(hostView).toBe(publishedMemberUri('localhost', 27018));
    expect(serviceEnv(layout, { ...single, runtime: 'local' }, secrets).MONGO_URI).toBe('mongodb://localhost:27017/');
  });

  it('give a remote worker the published member directly, with the same acknowledgement', () => {
    const layout = installLayout(join(dir, 'bundle'));
    const remote = (config: InstallConfig) => remoteWorkerEnv({ layout, config, secrets }, 'lab-pc', 'data.example.org').MONGO_URI;
    expect(remote({ ...cluster, ports: { ...cluster.ports, database: 27018 } })).toBe(publishedMemberUri('data.example.org', 27018));
    expect(remote(single)).toBe('mongodb://data.example.org:27017/');
    expect(parsed(publishedMemberUri('data.example.org', 27018))).toEqual({
      hosts: ['data.example.org:27018'],
      replicaSet: undefined,
      w: 'majority',
      retryWrites: true,
      retryReads: true,
      directConnection: true,
    });
  });

  it('survive the env file: service.env reads back the same URI', async () => {
    const layout = await installDir('derived');
    await writeDerivedConfig(layout, cluster, secrets, {});
    const env = parseEnv(await readFile(layout.serviceEnvFile, 'utf8')) as Record<string, string>;
    expect(env.MONGO_URI).toBe(replicaSetUri());
  });
});

describe('keyFile', () => {
  it('is 1008 base64 characters from 756 random bytes, different every time', () => {
    const key = generateKeyFile();
    expect(key.trimEnd()).toMatch(/^[A-Za-z0-9+/]{1008}$/);
    expect(Buffer.from(key, 'base64')).toHaveLength(756);
    expect(isValidKeyFile(key)).toBe(true);
    expect(generateKeyFile()).not.toBe(key);
  });

  it('refuses what mongod refuses: too short, too long, outside the base64 set', () => {
    expect(isValidKeyFile('abc')).toBe(false);
    expect(isValidKeyFile('a'.repeat(1025))).toBe(false);
    expect(isValidKeyFile('not-base64_chars!')).toBe(false);
  });

  it('is generated once (0600) and kept; a damaged one is replaced', async () => {
    const file = join(dir, 'keyfile-test');
    const first = await ensureKeyFile(file);
    expect(first.generated).toBe(true);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await ensureKeyFile(file)).toEqual({ keyFile: first.keyFile, generated: false });
    await writeFile(file, 'x!\n');
    const replaced = await ensureKeyFile(file);
    expect(replaced.generated).toBe(true);
    expect(isValidKeyFile(replaced.keyFile)).toBe(true);
  });
});

describe('per-service files and compose.env', () => {
  it('give the members the keyFile (0400, as kept in config/) and a client certificate from the client CA', async () => {
    const layout = await installDir('cluster-files');
    await writeComposeServiceFiles(layout, cluster, secrets);
    const mongo = join(layout.composeFilesDir, 'mongo');
    const keyFile = await readFile(join(mongo, 'keyfile'), 'utf8');
    expect(keyFile).toBe(await readFile(layout.mongoKeyFile, 'utf8'));
    expect((await stat(join(mongo, 'keyfile'))).mode & 0o777).toBe(0o400);
    if (process.getuid?.() === 0) expect((await stat(join(mongo, 'keyfile'))).uid).toBe(999);
    const member = new X509Certificate(await readFile(join(mongo, 'member-client.pem'), 'utf8'));
    expect(member.checkIssued(new X509Certificate(await readFile(join(certs, 'client-ca.pem'), 'utf8')))).toBe(true);
    expect(member.keyUsage ?? []).toContain('1.3.6.1.5.5.7.3.2'); // clientAuth

    // A re-run keeps the key the members already share.
    await writeComposeServiceFiles(layout, cluster, secrets);
    expect(await readFile(join(mongo, 'keyfile'), 'utf8')).toBe(keyFile);

    // Back to a single node: the cluster's files go.
    await writeComposeServiceFiles(layout, single, secrets);
    expect((await readdir(mongo)).sort()).not.toContain('keyfile');
    expect((await readdir(mongo)).sort()).not.toContain('member-client.pem');
  });

  it('mark the cluster in compose.env, which makes the runtime layer compose.cluster.yaml', async () => {
    const layout = await installDir('runtime');
    expect(composeEnv(layout, cluster, {}).CYBERCOM_TOPOLOGY).toBe('cluster');
    expect(composeEnv(layout, single, {})).not.toHaveProperty('CYBERCOM_TOPOLOGY');

    const runtime = new ComposeRuntime(layout);
    await writeDerivedConfig(layout, cluster, secrets, { CYBERCOM_COMPOSE_OVERRIDES: '/site/override.yaml' });
    const files = await runtime.composeFiles();
    expect(files.map((f) => f.split('/').pop())).toEqual(['compose.yaml', 'compose.cluster.yaml', 'override.yaml']);
    expect(files[1]).toBe(join(runtime.composeFile(), '..', 'compose.cluster.yaml'));

    await writeDerivedConfig(layout, single, secrets, {});
    expect((await runtime.composeFiles()).map((f) => f.split('/').pop())).toEqual(['compose.yaml', 'override.yaml']);
  });

  it('lets status and logs name the members and the initiation', async () => {
    const layout = await installDir('services');
    expect(new ComposeRuntime(layout).services).toEqual(COMPOSE_SERVICES);
    expect(new ComposeRuntime(layout, 'cluster').services).toEqual([...COMPOSE_SERVICES, 'mongo-2', 'mongo-3', 'mongo-replica-set']);
  });
});

describe('database certificate', () => {
  const names = async (certsDir: string) => new X509Certificate(await readFile(join(certsDir, 'mongodb.pem'), 'utf8')).subjectAltName;

  it('names every member in the cluster topology (re-issued, the CAs and client certificates kept), the first member alone otherwise', async () => {
    const own = join(dir, 'certs-cluster');
    await cp(certs, own, { recursive: true });
    expect(await names(own)).not.toContain('mongo-2');
    const actions = await ensureCertificates(own, { publicHost: '', validityDays: 365, topology: 'cluster', keyBits: KEY_BITS });
    expect(actions).toMatchObject({ mongodb: 'issued', ca: 'kept', 'client-ca': 'kept', api: 'kept', worker: 'kept' });
    for (const member of REPLICA_SET_MEMBERS) expect(await names(own)).toContain(`DNS:${member}`);
    // The extra names do not bother a single node.
    expect(
      Object.values(await ensureCertificates(own, { publicHost: '', validityDays: 365, keyBits: KEY_BITS })).every((a) => a === 'kept'),
    ).toBe(true);
  });
});

describe('single node', () => {
  it('writes the same files, byte for byte and mode for mode, as an install.json without the key', async () => {
    const before = await installDir('before');
    const after = await installDir('after');
    const explicit: InstallConfig = { ...single, topology: 'single' };
    for (const [layout, config] of [
      [before, single],
      [after, explicit],
    ] as const) {
      await writeDerivedConfig(layout, config, secrets, {});
      await writeComposeServiceFiles(layout, config, secrets);
    }
    const normalise = (files: Record<string, { mode: number; text: string }>, root: string) =>
      JSON.parse(JSON.stringify(files).replaceAll(root, '<dir>')) as Record<string, unknown>;
    const a = normalise(await filesUnder(before.root), before.root);
    const b = normalise(await filesUnder(after.root), after.root);
    expect(b).toEqual(a);
    expect(Object.keys(a)).not.toContain('/config/mongo-keyfile');
    expect(
      Object.keys(a)
        .filter((f) => f.startsWith('/compose/mongo/'))
        .sort(),
    ).toEqual(
      ['admin-password', 'api-password', 'ca.pem', 'client-ca.pem', 'health-client.pem', 'server-combined.pem', 'worker-password'].map(
        (f) => `/compose/mongo/${f}`,
      ),
    );
  });

  it('keeps install.json without a topology key; the cluster is written', () => {
    expect(serializeInstallConfig(single)).not.toContain('topology');
    expect(JSON.parse(serializeInstallConfig(cluster)).topology).toBe('cluster');
    expect(topologyOf(single)).toBe('single');
  });
});
