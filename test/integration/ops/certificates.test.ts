/**
 * The installation's certificates against the real broker and database: the fields each peer
 * checks, refusal of plaintext and certificate-less connections, ops/cert-status exit codes with
 * a certificate about to expire, and ops/rotate-certs from the existing server CA and with
 * --new-ca (services restarted, data intact, the old client certificate refused either way: a
 * rotation always replaces the client CA the servers verify clients against).
 */
import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import amqp from 'amqplib';
import { MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueClientCertificate } from '../../../src/pki/certificates.js';
import { readPemPair, writeKeyMaterial } from '../../../src/pki/files.js';
import { inspectCertificate } from '../../../src/pki/inspect.js';
import { loadSecrets, type Secrets } from '../../../src/installation/secrets.js';
import { adminLogin, call, install, prepareInstall, runTool, type TestInstall } from '../installer/support.js';

const execFileAsync = promisify(execFile);
let target: TestInstall;
let secrets: Secrets;
const certs = (): string => join(target.dir, 'certs');

interface ClientMaterial {
  ca: Buffer;
  cert?: Buffer;
  key?: Buffer;
}

async function material(name: string | undefined, caDir = certs()): Promise<ClientMaterial> {
  const ca = await readFile(join(caDir, 'ca.pem'));
  if (!name) return { ca };
  return { ca, cert: await readFile(join(certs(), `${name}.pem`)), key: await readFile(join(certs(), `${name}.key`)) };
}

async function brokerLogin(m: ClientMaterial, protocol: 'amqps' | 'amqp' = 'amqps'): Promise<void> {
  const connection = await amqp.connect(
    {
      protocol,
      hostname: 'localhost',
      port: target.ports.broker,
      username: 'cybercom-worker',
      password: secrets.BROKER_WORKER_PASSWORD,
      vhost: 'cybercom',
      heartbeat: 0,
    },
    { ca: [m.ca], cert: m.cert, key: m.key, servername: 'localhost', timeout: 5000 },
  );
  const channel = await connection.createChannel();
  await channel.close();
  await connection.close();
}

async function databaseLogin(opts: { tls: boolean; combined?: string; ca?: string }): Promise<void> {
  const client = new MongoClient(`mongodb://localhost:${target.ports.db}/`, {
    tls: opts.tls,
    ...(opts.tls
      ? { tlsCAFile: opts.ca ?? join(certs(), 'ca.pem'), ...(opts.combined ? { tlsCertificateKeyFile: opts.combined } : {}) }
      : {}),
    directConnection: true,
    auth: { username: 'cybercom-worker', password: secrets.DB_WORKER_PASSWORD },
    authSource: 'admin',
    serverSelectionTimeoutMS: 4000,
    connectTimeoutMS: 4000,
  });
  try {
    await client.db('admin').command({ ping: 1 });
    await client.db('e2e').command({ listCollections: 1, nameOnly: true });
  } finally {
    await client.close();
  }
}

beforeAll(async () => {
  target = await prepareInstall('certs');
  await install(target, '--cert-days', '200');
  secrets = await loadSecrets(join(target.dir, 'config', 'secrets.env'));
}, 300_000);

afterAll(async () => {
  await target?.cleanup();
}, 120_000);

describe('issued certificates', () => {
  it('carry what each peer checks: CA flags, server names, key usages, validity and chain', async () => {
    const info = async (name: string) => inspectCertificate(await readFile(join(certs(), `${name}.pem`), 'utf8'));
    for (const name of ['ca', 'client-ca']) {
      const ca = await info(name);
      expect(ca.isCa).toBe(true);
      expect(ca.extKeyUsage).toEqual([]);
    }
    for (const [name, service] of [
      ['rabbitmq', 'rabbitmq'],
      ['mongodb', 'mongo'],
    ] as const) {
      const server = await info(name);
      expect(server.isCa).toBe(false);
      expect(server.extKeyUsage).toEqual(['serverAuth']);
      expect(server.dnsNames).toEqual(expect.arrayContaining(['localhost', service]));
      expect(server.ipAddresses).toEqual(expect.arrayContaining(['127.0.0.1', '::1']));
      expect(server.signatureAlgorithm).toBe('sha256WithRSAEncryption');
    }
    for (const name of ['api', 'worker']) {
      const client = await info(name);
      expect(client.extKeyUsage).toEqual(['clientAuth']);
      const days = (client.notAfter.getTime() - client.notBefore.getTime()) / 86_400_000;
      expect(days).toBe(200);
    }
    // OpenSSL itself builds and checks the chains: servers to the server CA, clients to the client CA only.
    const verify = (ca: string, name: string) =>
      execFileAsync('openssl', ['verify', '-CAfile', join(certs(), `${ca}.pem`), join(certs(), `${name}.pem`)]);
    for (const [ca, names] of [
      ['ca', ['rabbitmq', 'mongodb']],
      ['client-ca', ['api', 'worker']],
    ] as const) {
      for (const name of names) expect((await verify(ca, name)).stdout.trim()).toBe(`${join(certs(), `${name}.pem`)}: OK`);
    }
    await expect(verify('ca', 'worker')).rejects.toThrow();
    await expect(verify('client-ca', 'rabbitmq')).rejects.toThrow();
  });
});

describe('the broker and the database refuse', () => {
  it('accept the worker with its certificate and credentials (control)', async () => {
    await brokerLogin(await material('worker'));
    await databaseLogin({ tls: true, combined: join(certs(), 'worker-combined.pem') });
  });

  it('plaintext connections', async () => {
    await expect(brokerLogin(await material('worker'), 'amqp')).rejects.toThrow();
    await expect(databaseLogin({ tls: false })).rejects.toThrow();
  });

  it('TLS connections without a client certificate', async () => {
    await expect(brokerLogin(await material(undefined))).rejects.toThrow();
    await expect(databaseLogin({ tls: true })).rejects.toThrow();
  });

  it('client certificates signed by the server CA: only the client CA vouches for clients', async () => {
    const scratch = await mkdtemp(join(tmpdir(), 'cybercom-wrongca-'));
    try {
      const impostor = await issueClientCertificate(await readPemPair(certs(), 'ca'), { commonName: 'cybercom-worker' });
      const paths = await writeKeyMaterial(scratch, 'impostor', impostor);
      await expect(
        brokerLogin({
          ca: await readFile(join(certs(), 'ca.pem')),
          cert: Buffer.from(impostor.certPem),
          key: Buffer.from(impostor.keyPem),
        }),
      ).rejects.toThrow();
      await expect(databaseLogin({ tls: true, combined: paths.combinedFile })).rejects.toThrow();
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  });
});

describe('ops/cert-status', () => {
  let copy: string;
  beforeAll(async () => {
    // A copy of the installation's certificates with the worker's replaced by one that expires in 5 days.
    copy = await mkdtemp(join(tmpdir(), 'cybercom-certstatus-'));
    await cp(certs(), join(copy, 'certs'), { recursive: true });
    const clientCa = await readPemPair(certs(), 'client-ca');
    await writeKeyMaterial(
      join(copy, 'certs'),
      'worker',
      await issueClientCertificate(clientCa, { commonName: 'cybercom-worker', validityDays: 5 }),
    );
  });
  afterAll(async () => {
    await rm(copy, { recursive: true, force: true });
  });

  it('exits 0 when every certificate is valid beyond the window', async () => {
    const result = await runTool('ops/cert-status', ['--dir', target.dir]);
    expect(result.code, result.output).toBe(0);
    for (const name of ['ca', 'client-ca', 'rabbitmq', 'mongodb', 'api', 'worker']) expect(result.stdout).toContain(`${name} (`);
    expect(result.stdout).toContain('subject:');
    expect(result.stdout).toContain('issuer:');
  });

  it('exits 1 when a certificate expires within 30 days (default), 0 with a shorter window', async () => {
    const warned = await runTool('ops/cert-status', ['--dir', copy, '--json']);
    expect(warned.code, warned.output).toBe(1);
    const report = JSON.parse(warned.stdout) as {
      ok: boolean;
      problems: string[];
      certificates: Array<{ name: string; daysLeft: number; dnsNames: string[]; issuer: string }>;
    };
    expect(report.ok).toBe(false);
    expect(report.problems).toEqual(['worker: expires in 4 day(s)']);
    expect(report.certificates.find((c) => c.name === 'worker')?.daysLeft).toBe(4);
    expect(report.certificates.find((c) => c.name === 'rabbitmq')?.dnsNames).toContain('rabbitmq');
    expect((await runTool('ops/cert-status', ['--dir', copy, '--days', '3'])).code).toBe(0);
  });

  it('exits 3 without certificates and 2 on a usage error', async () => {
    const empty = await mkdtemp(join(tmpdir(), 'cybercom-nocerts-'));
    await mkdir(join(empty, 'certs'));
    expect((await runTool('ops/cert-status', ['--dir', empty])).code).toBe(3);
    expect((await runTool('ops/cert-status', ['--dir', copy, '--days', 'soon'])).code).toBe(2);
    await rm(empty, { recursive: true, force: true });
  });
});

// Each rotation restarts every service of the installation: 20–50 s, more with the suite beside it.
describe('ops/rotate-certs', { timeout: 180_000 }, () => {
  let oldWorker: { cert: Buffer; key: Buffer; combined: string; ca: string };
  let recordId: string;
  let scratch: string;

  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'cybercom-oldcerts-'));
    await cp(join(certs(), 'worker-combined.pem'), join(scratch, 'worker-combined.pem'));
    await cp(join(certs(), 'ca.pem'), join(scratch, 'ca.pem'));
    oldWorker = {
      cert: await readFile(join(certs(), 'worker.pem')),
      key: await readFile(join(certs(), 'worker.key')),
      combined: join(scratch, 'worker-combined.pem'),
      ca: join(scratch, 'ca.pem'),
    };
    const token = await adminLogin(target.api);
    await call(target.api, '/api/data_store/data/', { method: 'POST', bearer: token, body: { database: 'keep' } });
    await call(target.api, '/api/data_store/data/keep/', { method: 'POST', bearer: token, body: { collection: 'things' } });
    const created = await call(target.api, '/api/data_store/data/keep/things/', { method: 'POST', bearer: token, body: { kept: true } });
    expect(created.status, created.text).toBe(201);
    recordId = created.json._id ?? created.json.id ?? created.json.inserted_ids?.[0];
  });
  afterAll(async () => {
    await rm(scratch, { recursive: true, force: true });
  });

  async function dataIntact(): Promise<void> {
    const token = await adminLogin(target.api);
    const list = await call(target.api, '/api/data_store/data/keep/things/', { bearer: token });
    expect(list.status).toBe(200);
    expect(list.json.results).toEqual([expect.objectContaining({ kept: true })]);
  }

  it('re-issues from the existing server CA with a new client CA: the old client certificate is refused, data kept', async () => {
    const caBefore = await readFile(join(certs(), 'ca.pem'), 'utf8');
    const clientCaBefore = await readFile(join(certs(), 'client-ca.pem'), 'utf8');
    const result = await runTool('ops/rotate-certs', ['--dir', target.dir, '--days', '90']);
    expect(result.code, result.output).toBe(0);
    expect(result.output).toContain('All services healthy with the new certificates');
    expect(result.output).toMatch(/Remote workers .*need a new bundle \(the old bundles are refused from now on\)/i);
    expect(await readFile(join(certs(), 'ca.pem'), 'utf8')).toBe(caBefore);
    expect(await readFile(join(certs(), 'client-ca.pem'), 'utf8')).not.toBe(clientCaBefore);
    const worker = new X509Certificate(await readFile(join(certs(), 'worker.pem')));
    expect(worker.serialNumber).not.toBe(new X509Certificate(oldWorker.cert).serialNumber);
    expect((new Date(worker.validTo).getTime() - new Date(worker.validFrom).getTime()) / 86_400_000).toBe(90);
    // The new certificate is accepted...
    await brokerLogin(await material('worker'));
    await databaseLogin({ tls: true, combined: join(certs(), 'worker-combined.pem') });
    // ...and the old one refused by both, although it has not expired and the server CA is unchanged.
    await expect(brokerLogin({ ca: await readFile(oldWorker.ca), cert: oldWorker.cert, key: oldWorker.key })).rejects.toThrow();
    await expect(databaseLogin({ tls: true, combined: oldWorker.combined, ca: oldWorker.ca })).rejects.toThrow();
    await dataIntact();
    expect(recordId).toBeTruthy();
  });

  it('--keep-client-ca (the scheduled renewal): new certificates, and the ones valid until then stay accepted', async () => {
    const clientCaBefore = await readFile(join(certs(), 'client-ca.pem'), 'utf8');
    await cp(join(certs(), 'worker-combined.pem'), join(scratch, 'renewed-combined.pem'));
    const current = { cert: await readFile(join(certs(), 'worker.pem')), key: await readFile(join(certs(), 'worker.key')) };
    const result = await runTool('ops/rotate-certs', ['--dir', target.dir, '--keep-client-ca']);
    expect(result.code, result.output).toBe(0);
    expect(result.output).toContain('from the existing client CA');
    expect(result.output).toMatch(/need a new bundle \(the old bundles keep working until their certificates expire\)/);
    expect(await readFile(join(certs(), 'client-ca.pem'), 'utf8')).toBe(clientCaBefore);
    expect(await readFile(join(certs(), 'worker.pem'))).not.toEqual(current.cert);
    await brokerLogin(await material('worker'));
    await brokerLogin({ ca: await readFile(join(certs(), 'ca.pem')), ...current });
    await databaseLogin({ tls: true, combined: join(scratch, 'renewed-combined.pem') });
    expect((await runTool('ops/rotate-certs', ['--dir', target.dir, '--keep-client-ca', '--new-ca'])).code).toBe(2);
  });

  it('--new-ca: the server CA is new too; the client certificate valid until then is refused, the new one accepted, data intact', async () => {
    // The certificates of the previous rotation, valid until this one.
    await cp(join(certs(), 'worker-combined.pem'), join(scratch, 'previous-combined.pem'));
    await cp(join(certs(), 'ca.pem'), join(scratch, 'previous-ca.pem'));
    const previous = {
      ca: join(scratch, 'previous-ca.pem'),
      combined: join(scratch, 'previous-combined.pem'),
      cert: await readFile(join(certs(), 'worker.pem')),
      key: await readFile(join(certs(), 'worker.key')),
    };
    await brokerLogin({ ca: await readFile(previous.ca), cert: previous.cert, key: previous.key });

    const result = await runTool('ops/rotate-certs', ['--dir', target.dir, '--new-ca']);
    expect(result.code, result.output).toBe(0);
    expect(await readFile(join(certs(), 'ca.pem'), 'utf8')).not.toBe(await readFile(previous.ca, 'utf8'));
    await brokerLogin(await material('worker'));
    await databaseLogin({ tls: true, combined: join(certs(), 'worker-combined.pem') });
    // The previous certificate: the old server CA no longer verifies the servers, and with the new one it is refused.
    await expect(brokerLogin({ ca: await readFile(previous.ca), cert: previous.cert, key: previous.key })).rejects.toThrow();
    await expect(brokerLogin({ ca: await readFile(join(certs(), 'ca.pem')), cert: previous.cert, key: previous.key })).rejects.toThrow();
    await expect(databaseLogin({ tls: true, combined: previous.combined, ca: join(certs(), 'ca.pem') })).rejects.toThrow();
    await expect(brokerLogin({ ca: await readFile(join(certs(), 'ca.pem')), cert: oldWorker.cert, key: oldWorker.key })).rejects.toThrow();
    await dataIntact();
    expect((await runTool('ops/status', ['--dir', target.dir])).code).toBe(0);
    await writeFile(join(scratch, 'done'), '');
  });
});
