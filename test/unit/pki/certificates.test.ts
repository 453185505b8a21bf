import { X509Certificate, createPrivateKey, createPublicKey } from 'node:crypto';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, createServer, type TLSSocket } from 'node:tls';
import forge from 'node-forge';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createCertificateAuthority,
  issueClientCertificate,
  issueServerCertificate,
  serverSubjectAltNames,
  type PemPair,
} from '../../../src/pki/certificates.js';
import { readPemPair, writeKeyMaterial } from '../../../src/pki/files.js';
import { daysUntilExpiry, inspectCertificate, verifyIssuedBy } from '../../../src/pki/inspect.js';

const DAY_MS = 86_400_000;
/**
 * Keys of the tests that are not about the key: 1024-bit ones are generated and sign many times
 * faster. The certificates the OpenSSL handshake and the RSA 2048 check use keep the default.
 */
const TEST_KEY_BITS = 1024;
const SKEW_MS = 5 * 60 * 1000;

interface ParsedExtension {
  name: string;
  critical?: boolean;
  [key: string]: unknown;
}

function extension(pem: string, name: string): ParsedExtension | undefined {
  return (forge.pki.certificateFromPem(pem).getExtension(name) ?? undefined) as ParsedExtension | undefined;
}

/** Checks notBefore is backdated by 5 minutes relative to the issuance time and the span is exact. */
function expectValidity(pem: string, days: number, issuedFrom: number, issuedTo: number): void {
  const info = inspectCertificate(pem);
  // X.509 times have one-second resolution.
  expect(info.notBefore.getTime()).toBeGreaterThanOrEqual(Math.floor((issuedFrom - SKEW_MS) / 1000) * 1000);
  expect(info.notBefore.getTime()).toBeLessThanOrEqual(issuedTo - SKEW_MS);
  expect(info.notAfter.getTime() - info.notBefore.getTime()).toBe(days * DAY_MS);
}

describe('certificate issuance', () => {
  let ca: PemPair;
  let otherCa: PemPair;
  let server: PemPair;
  let client: PemPair;
  let issuedFrom: number;
  let issuedTo: number;
  const altNames = serverSubjectAltNames('api.example.org');

  beforeAll(async () => {
    issuedFrom = Date.now();
    [ca, otherCa] = await Promise.all([
      createCertificateAuthority({ commonName: 'Test CA' }),
      createCertificateAuthority({ commonName: 'Other CA' }),
    ]);
    [server, client] = await Promise.all([
      issueServerCertificate(ca, { commonName: 'server', ...altNames }),
      issueClientCertificate(ca, { commonName: 'api' }),
    ]);
    issuedTo = Date.now();
  });

  describe('CA', () => {
    it('is a critical CA:TRUE with keyCertSign+cRLSign, an SKI and no EKU', () => {
      const info = inspectCertificate(ca.certPem);
      expect(info.isCa).toBe(true);
      expect(info.extKeyUsage).toEqual([]);
      expect(extension(ca.certPem, 'extKeyUsage')).toBeUndefined();
      expect(extension(ca.certPem, 'basicConstraints')).toMatchObject({ cA: true, critical: true });
      const keyUsage = extension(ca.certPem, 'keyUsage');
      expect(keyUsage).toMatchObject({ keyCertSign: true, cRLSign: true, critical: true });
      expect(keyUsage?.digitalSignature).toBe(false);
      expect(extension(ca.certPem, 'subjectKeyIdentifier')).toBeDefined();
      expect(info.subject).toContain('CN=Test CA');
      expect(info.issuer).toBe(info.subject);
    });

    it('is valid for 3650 days by default, backdated 5 minutes', () => {
      expectValidity(ca.certPem, 3650, issuedFrom, issuedTo);
    });

    it('is self-signed with SHA-256 and verifies against itself only', () => {
      expect(inspectCertificate(ca.certPem).signatureAlgorithm).toBe('sha256WithRSAEncryption');
      expect(verifyIssuedBy(ca.certPem, ca.certPem)).toBe(true);
      expect(verifyIssuedBy(ca.certPem, otherCa.certPem)).toBe(false);
    });
  });

  describe('server certificate', () => {
    it('carries every expected SAN (DNS and IP)', () => {
      const info = inspectCertificate(server.certPem);
      expect(info.dnsNames.sort()).toEqual(['api.example.org', 'localhost', 'mongo', 'rabbitmq']);
      expect(info.ipAddresses.sort()).toEqual(['127.0.0.1', '::1']);
      // Cross-check with OpenSSL's own hostname matching.
      const x509 = new X509Certificate(server.certPem);
      expect(x509.checkHost('rabbitmq')).toBe('rabbitmq');
      expect(x509.checkHost('api.example.org')).toBe('api.example.org');
      expect(x509.checkIP('127.0.0.1')).toBe('127.0.0.1');
      expect(x509.checkHost('evil.example.org')).toBeUndefined();
    });

    it('is a non-CA serverAuth leaf with digitalSignature+keyEncipherment, SKI and AKI of its CA', () => {
      const info = inspectCertificate(server.certPem);
      expect(info.isCa).toBe(false);
      expect(info.extKeyUsage).toEqual(['serverAuth']);
      expect(extension(server.certPem, 'basicConstraints')).toMatchObject({ cA: false });
      expect(extension(server.certPem, 'keyUsage')).toMatchObject({
        digitalSignature: true,
        keyEncipherment: true,
        keyCertSign: false,
      });
      expect(extension(server.certPem, 'subjectKeyIdentifier')).toBeDefined();
      const aki = forge.asn1.fromDer(
        (forge.pki.certificateFromPem(server.certPem).getExtension('authorityKeyIdentifier') as { value: string }).value,
      );
      // AuthorityKeyIdentifier ::= SEQUENCE { [0] keyIdentifier }
      const akiBytes = (aki.value as forge.asn1.Asn1[])[0]?.value as string;
      const caSki = extension(ca.certPem, 'subjectKeyIdentifier')?.subjectKeyIdentifier;
      expect(forge.util.bytesToHex(akiBytes)).toBe(caSki);
    });

    it('is valid for 365 days by default and for a custom number of days when asked', async () => {
      expectValidity(server.certPem, 365, issuedFrom, issuedTo);
      const before = Date.now();
      const short = await issueServerCertificate(ca, {
        commonName: 's',
        dnsNames: ['localhost'],
        ipAddresses: [],
        validityDays: 30,
        keyBits: TEST_KEY_BITS,
      });
      expectValidity(short.certPem, 30, before, Date.now());
      expect(daysUntilExpiry(short.certPem, new Date(before))).toBe(29);
      expect(daysUntilExpiry(short.certPem, new Date(before + 31 * DAY_MS))).toBeLessThan(0);
    });

    it('chains to its CA and not to another CA', () => {
      expect(verifyIssuedBy(server.certPem, ca.certPem)).toBe(true);
      expect(verifyIssuedBy(server.certPem, otherCa.certPem)).toBe(false);
    });

    it('is signed with SHA-256, has an RSA 2048 key matching its private key, and a positive 16-byte serial', () => {
      const info = inspectCertificate(server.certPem);
      expect(info.signatureAlgorithm).toBe('sha256WithRSAEncryption');
      const x509 = new X509Certificate(server.certPem);
      expect(x509.publicKey.asymmetricKeyDetails?.modulusLength).toBe(2048);
      const fromKey = createPublicKey(server.keyPem).export({ type: 'spki', format: 'der' });
      expect(Buffer.compare(fromKey, x509.publicKey.export({ type: 'spki', format: 'der' }))).toBe(0);
      expect(info.serialNumber).toMatch(/^[0-9A-F]{32}$/);
      expect(parseInt(info.serialNumber.slice(0, 2), 16)).toBeLessThan(0x80);
      expect(info.serialNumber).not.toBe(inspectCertificate(client.certPem).serialNumber);
    });

    it('has a key of keyBits bits when asked, the leaf and the CA alike, and refuses keys under 1024 bits', async () => {
      const small = await createCertificateAuthority({ keyBits: TEST_KEY_BITS });
      const leaf = await issueClientCertificate(small, { commonName: 'small', keyBits: TEST_KEY_BITS });
      for (const pair of [small, leaf]) {
        expect(new X509Certificate(pair.certPem).publicKey.asymmetricKeyDetails?.modulusLength).toBe(TEST_KEY_BITS);
        expect(createPrivateKey(pair.keyPem).asymmetricKeyDetails?.modulusLength).toBe(TEST_KEY_BITS);
      }
      expect(verifyIssuedBy(leaf.certPem, small.certPem)).toBe(true);
      await expect(createCertificateAuthority({ keyBits: 512 })).rejects.toThrow(RangeError);
      await expect(issueClientCertificate(small, { commonName: 'x', keyBits: 1000.5 })).rejects.toThrow(RangeError);
    });

    it('refuses an empty SAN list and malformed IPs', async () => {
      await expect(issueServerCertificate(ca, { commonName: 'x', dnsNames: [], ipAddresses: [] })).rejects.toThrow();
      await expect(issueServerCertificate(ca, { commonName: 'x', dnsNames: [], ipAddresses: ['not-an-ip'] })).rejects.toThrow();
    });
  });

  describe('client certificate', () => {
    it('is a non-CA clientAuth leaf without SANs, chaining to its CA only', () => {
      const info = inspectCertificate(client.certPem);
      expect(info.isCa).toBe(false);
      expect(info.extKeyUsage).toEqual(['clientAuth']);
      expect(info.subject).toContain('CN=api');
      expect(info.dnsNames).toEqual([]);
      expect(info.signatureAlgorithm).toBe('sha256WithRSAEncryption');
      expectValidity(client.certPem, 365, issuedFrom, issuedTo);
      expect(verifyIssuedBy(client.certPem, ca.certPem)).toBe(true);
      expect(verifyIssuedBy(client.certPem, otherCa.certPem)).toBe(false);
    });
  });

  describe('mutual TLS with OpenSSL', () => {
    /** Starts a TLS server requiring client certificates from `ca`; resolves with the result of one handshake. */
    async function handshake(clientPair: PemPair | undefined, trustCa: PemPair): Promise<'ok' | string> {
      const srv = createServer({
        cert: server.certPem,
        key: server.keyPem,
        ca: ca.certPem,
        requestCert: true,
        rejectUnauthorized: true,
        minVersion: 'TLSv1.2',
        maxVersion: 'TLSv1.2', // TLS 1.2 reports a refused client certificate during the handshake.
      });
      srv.on('secureConnection', (s: TLSSocket) => s.end('hello'));
      srv.on('tlsClientError', () => undefined);
      await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
      const port = (srv.address() as { port: number }).port;
      try {
        return await new Promise<string>((resolve) => {
          const sock = connect({
            host: '127.0.0.1',
            port,
            servername: 'localhost',
            ca: trustCa.certPem,
            ...(clientPair ? { cert: clientPair.certPem, key: clientPair.keyPem } : {}),
          });
          sock.on('data', () => {
            resolve('ok');
            sock.destroy();
          });
          sock.on('error', (err) => resolve(String((err as NodeJS.ErrnoException).code ?? err.message)));
          sock.on('close', () => resolve('closed'));
        });
      } finally {
        await new Promise((resolve) => srv.close(resolve));
      }
    }

    it('accepts the client certificate and rejects a missing one, a server-only EKU, or a foreign CA', async () => {
      expect(await handshake(client, ca)).toBe('ok');
      expect(await handshake(undefined, ca)).not.toBe('ok');
      // A serverAuth-only certificate must not work as a client identity.
      expect(await handshake(server, ca)).not.toBe('ok');
      const foreign = await issueClientCertificate(otherCa, { commonName: 'intruder' });
      expect(await handshake(foreign, ca)).not.toBe('ok');
      // The client side verifies the server against the CA it trusts.
      // (OpenSSL auto-chains the CA from the server's trust store, hence either code.)
      expect(await handshake(client, otherCa)).toMatch(/^(SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE)$/);
    });
  });
});

describe('serverSubjectAltNames', () => {
  it('always includes the local and compose names', () => {
    expect(serverSubjectAltNames()).toEqual({
      dnsNames: ['localhost', 'mongo', 'rabbitmq'],
      ipAddresses: ['127.0.0.1', '::1'],
    });
  });

  it('adds a public host as DNS or IP as appropriate', () => {
    expect(serverSubjectAltNames('Queue.Example.org').dnsNames).toContain('queue.example.org');
    expect(serverSubjectAltNames('203.0.113.7').ipAddresses).toEqual(['127.0.0.1', '::1', '203.0.113.7']);
    expect(serverSubjectAltNames('203.0.113.7').dnsNames).not.toContain('203.0.113.7');
    expect(serverSubjectAltNames('[2001:db8::5]').ipAddresses).toContain('2001:db8::5');
    expect(serverSubjectAltNames('localhost').dnsNames).toEqual(['localhost', 'mongo', 'rabbitmq']);
  });
});

describe('key material files', () => {
  let dir: string;
  beforeAll(async () => {
    dir = join(await mkdtemp(join(tmpdir(), 'pki-files-')), 'certs');
  });
  afterAll(async () => {
    await rm(join(dir, '..'), { recursive: true, force: true });
  });

  it('writes cert 0644, key and combined 0600 in a 0700 directory, and reads them back', async () => {
    const ca = await createCertificateAuthority({ keyBits: TEST_KEY_BITS });
    const pair = await issueClientCertificate(ca, { commonName: 'worker', keyBits: TEST_KEY_BITS });
    const paths = await writeKeyMaterial(dir, 'worker', pair);
    expect(paths).toEqual({
      certFile: join(dir, 'worker.pem'),
      keyFile: join(dir, 'worker.key'),
      combinedFile: join(dir, 'worker-combined.pem'),
    });
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    expect((await stat(paths.certFile)).mode & 0o777).toBe(0o644);
    expect((await stat(paths.keyFile)).mode & 0o777).toBe(0o600);
    expect((await stat(paths.combinedFile)).mode & 0o777).toBe(0o600);

    const combined = await readFile(paths.combinedFile, 'utf8');
    expect(combined).toMatch(
      /^-----BEGIN CERTIFICATE-----[\s\S]+-----END CERTIFICATE-----\n-----BEGIN PRIVATE KEY-----[\s\S]+-----END PRIVATE KEY-----\n$/,
    );
    const back = await readPemPair(dir, 'worker');
    expect(back.certPem.trim()).toBe(pair.certPem.trim());
    expect(back.keyPem.trim()).toBe(pair.keyPem.trim());
  });

  it('replaces existing files atomically, keeps modes, leaves no temp files, and can skip the combined file', async () => {
    const ca = await createCertificateAuthority({ keyBits: TEST_KEY_BITS });
    await writeKeyMaterial(dir, 'ca', ca, { combined: false });
    const again = await createCertificateAuthority({ keyBits: TEST_KEY_BITS });
    const paths = await writeKeyMaterial(dir, 'ca', again, { combined: false });
    expect((await readPemPair(dir, 'ca')).certPem.trim()).toBe(again.certPem.trim());
    expect((await stat(paths.keyFile)).mode & 0o777).toBe(0o600);
    await expect(stat(paths.combinedFile)).rejects.toThrow();
    const { readdir } = await import('node:fs/promises');
    expect((await readdir(dir)).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });
});
