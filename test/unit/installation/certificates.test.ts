/**
 * Which certificate the appliance keeps, issues or adopts, and which CA signs it: the server CA
 * signs the broker and database certificates, the client CA the API and worker certificates;
 * a rotation always replaces the client CA (so every earlier client certificate stops chaining
 * to what the servers trust), and replaces the server CA only with --new-ca.
 */
import { cp, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ensureCertificates, inspectCertificates, reissueCertificates } from '../../../src/installation/certificates.js';
import { createCertificateAuthority, issueClientCertificate, issueServerCertificate } from '../../../src/pki/certificates.js';
import { readPemPair, writeKeyMaterial } from '../../../src/pki/files.js';
import { verifyIssuedBy } from '../../../src/pki/inspect.js';

/** 1024-bit keys: nothing here is about the key, and each is generated and signs many times faster. */
const KEY_BITS = 1024;
const OPTIONS = { publicHost: 'data.example.org', validityDays: 365, keyBits: KEY_BITS };
const LEAVES = ['rabbitmq', 'mongodb', 'api', 'worker'] as const;
let dir: string;
/**
 * One fresh installation's certificates, issued once: most tests start from an existing
 * installation, and every key and signature costs CPU time (RSA keys, signatures in pure
 * JavaScript), which made this file take half a minute when each test issued its own.
 */
let issued: string;

const pem = (name: string): Promise<string> => readFile(join(dir, `${name}.pem`), 'utf8');
async function snapshot(): Promise<Record<string, string>> {
  const names = ['ca', 'client-ca', ...LEAVES];
  return Object.fromEntries(await Promise.all(names.map(async (n) => [n, await pem(n)] as const)));
}
async function signedBy(leaf: string, ca: string): Promise<boolean> {
  return verifyIssuedBy(await pem(leaf), await pem(ca));
}

/** `dir` holding the certificates of an installation made by ensureCertificates. */
async function existingInstallation(): Promise<void> {
  await cp(issued, dir, { recursive: true });
}

beforeAll(async () => {
  issued = await mkdtemp(join(tmpdir(), 'cybercom-appliance-certs-issued-'));
  await ensureCertificates(issued, OPTIONS);
}, 60_000);
afterAll(async () => {
  await rm(issued, { recursive: true, force: true });
});
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cybercom-appliance-certs-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('ensureCertificates', () => {
  it('issues two distinct CAs on a fresh installation: servers from the server CA, clients from the client CA', async () => {
    const actions = await ensureCertificates(dir, OPTIONS);
    expect(actions).toEqual({
      ca: 'issued',
      'client-ca': 'issued',
      rabbitmq: 'issued',
      mongodb: 'issued',
      api: 'issued',
      worker: 'issued',
    });
    expect(await pem('ca')).not.toBe(await pem('client-ca'));
    for (const server of ['rabbitmq', 'mongodb']) {
      expect(await signedBy(server, 'ca'), server).toBe(true);
      expect(await signedBy(server, 'client-ca'), server).toBe(false);
    }
    for (const client of ['api', 'worker']) {
      expect(await signedBy(client, 'client-ca'), client).toBe(true);
      expect(await signedBy(client, 'ca'), client).toBe(false);
    }
    const reports = await inspectCertificates(dir);
    expect(reports.map((r) => r.name)).toEqual(['ca', 'client-ca', ...LEAVES]);
    expect(reports.every((r) => r.issuedByCa)).toBe(true);
    expect(reports.find((r) => r.name === 'client-ca')?.subject).toContain('cybercom client CA');
  });

  it('keeps everything byte for byte on a second run', async () => {
    await existingInstallation();
    const before = await snapshot();
    const actions = await ensureCertificates(dir, OPTIONS);
    expect(new Set(Object.values(actions))).toEqual(new Set(['kept']));
    expect(await snapshot()).toEqual(before);
  });

  it('re-issues only a client certificate that the client CA did not sign', async () => {
    await existingInstallation();
    await writeKeyMaterial(
      dir,
      'worker',
      await issueClientCertificate(await readPemPair(dir, 'ca'), { commonName: 'cybercom-worker', keyBits: KEY_BITS }),
    );
    const actions = await ensureCertificates(dir, OPTIONS);
    expect(actions).toMatchObject({ ca: 'kept', 'client-ca': 'kept', api: 'kept', worker: 'issued', rabbitmq: 'kept' });
    expect(await signedBy('worker', 'client-ca')).toBe(true);
  });

  it('adopts the server CA as the client CA for an installation made before the client CA, changing no certificate', async () => {
    // The layout of earlier versions: one CA signs everything, no client-ca files.
    const ca = await createCertificateAuthority({ commonName: 'cybercom CA', keyBits: KEY_BITS });
    await writeKeyMaterial(dir, 'ca', ca, { combined: false });
    for (const name of ['rabbitmq', 'mongodb']) {
      const serviceName = name === 'mongodb' ? 'mongo' : name;
      await writeKeyMaterial(
        dir,
        name,
        await issueServerCertificate(ca, {
          commonName: `cybercom ${name}`,
          dnsNames: ['localhost', serviceName, OPTIONS.publicHost],
          ipAddresses: ['127.0.0.1', '::1'],
          keyBits: KEY_BITS,
        }),
      );
    }
    for (const name of ['api', 'worker'])
      await writeKeyMaterial(dir, name, await issueClientCertificate(ca, { commonName: `cybercom-${name}`, keyBits: KEY_BITS }));
    const leavesBefore = await Promise.all(LEAVES.map(pem));

    const actions = await ensureCertificates(dir, OPTIONS);
    expect(actions).toEqual({ ca: 'kept', 'client-ca': 'adopted', rabbitmq: 'kept', mongodb: 'kept', api: 'kept', worker: 'kept' });
    expect(await pem('client-ca')).toBe(await pem('ca'));
    expect(await Promise.all(LEAVES.map(pem))).toEqual(leavesBefore);
    // Adopted once; from then on it is the kept client CA.
    expect((await ensureCertificates(dir, OPTIONS))['client-ca']).toBe('kept');

    // The first rotation separates them: the old client certificates no longer chain to the client CA.
    const oldWorker = await pem('worker');
    await reissueCertificates(dir, { ...OPTIONS, newCa: false });
    expect(await pem('client-ca')).not.toBe(await pem('ca'));
    expect(verifyIssuedBy(oldWorker, await pem('client-ca'))).toBe(false);
  });

  it('with force, issues both CAs and every leaf again', async () => {
    await existingInstallation();
    const before = await snapshot();
    const actions = await ensureCertificates(dir, { ...OPTIONS, force: true });
    expect(new Set(Object.values(actions))).toEqual(new Set(['issued']));
    const after = await snapshot();
    for (const name of Object.keys(before)) expect(after[name], name).not.toBe(before[name]);
  });
});

describe('reissueCertificates (rotation)', () => {
  it('keeps the server CA, replaces the client CA: old client certificates stop chaining to it', async () => {
    await existingInstallation();
    const before = await snapshot();
    expect(await reissueCertificates(dir, { ...OPTIONS, validityDays: 90, newCa: false })).toEqual({ ca: 'kept', 'client-ca': 'issued' });
    const after = await snapshot();
    expect(after.ca).toBe(before.ca);
    expect(after['client-ca']).not.toBe(before['client-ca']);
    for (const leaf of LEAVES) expect(after[leaf], leaf).not.toBe(before[leaf]);
    expect(verifyIssuedBy(before.worker as string, after['client-ca'] as string)).toBe(false);
    expect(verifyIssuedBy(before.api as string, after['client-ca'] as string)).toBe(false);
    expect(await signedBy('worker', 'client-ca')).toBe(true);
    expect(await signedBy('rabbitmq', 'ca')).toBe(true);
    // Clients keep trusting the unchanged server CA, which still signs the new server certificates.
    expect(verifyIssuedBy(after.mongodb as string, before.ca as string)).toBe(true);
    expect((await inspectCertificates(dir)).every((r) => r.issuedByCa)).toBe(true);
  });

  it('with keepClientCa (renewal) issues new leaves from both existing CAs: earlier client certificates still chain', async () => {
    await existingInstallation();
    const before = await snapshot();
    const kept = await reissueCertificates(dir, { ...OPTIONS, newCa: false, keepClientCa: true });
    expect(kept).toEqual({ ca: 'kept', 'client-ca': 'kept' });
    const after = await snapshot();
    expect(after.ca).toBe(before.ca);
    expect(after['client-ca']).toBe(before['client-ca']);
    for (const leaf of LEAVES) expect(after[leaf], leaf).not.toBe(before[leaf]);
    expect(verifyIssuedBy(before.worker as string, after['client-ca'] as string)).toBe(true);
    expect(await signedBy('worker', 'client-ca')).toBe(true);
  });

  it('with newCa replaces both CAs (keepClientCa cannot keep a client CA beside a new server CA)', async () => {
    await existingInstallation();
    const before = await snapshot();
    expect(await reissueCertificates(dir, { ...OPTIONS, newCa: true, keepClientCa: true })).toEqual({
      ca: 'issued',
      'client-ca': 'issued',
    });
    const after = await snapshot();
    expect(after.ca).not.toBe(before.ca);
    expect(after['client-ca']).not.toBe(before['client-ca']);
    expect(verifyIssuedBy(after.rabbitmq as string, before.ca as string)).toBe(false);
    expect(await signedBy('rabbitmq', 'ca')).toBe(true);
    expect(await signedBy('api', 'client-ca')).toBe(true);
  });
});
