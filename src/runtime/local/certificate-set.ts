/**
 * The certificate set a local deployment needs: a CA, one server certificate shared by the broker
 * and the database, and one client certificate per client identity. Reused when every file is
 * present, chains to the CA, matches its key, carries the required names and is not about to
 * expire; otherwise the whole set is issued again (a new CA invalidates every old leaf anyway).
 */
import { X509Certificate, createPrivateKey, createPublicKey } from 'node:crypto';
import { access } from 'node:fs/promises';
import {
  createCertificateAuthority,
  issueClientCertificate,
  issueServerCertificate,
  serverSubjectAltNames,
  type PemPair,
} from '../../pki/certificates.js';
import { keyMaterialPaths, readPemPair, writeKeyMaterial, type KeyMaterialPaths } from '../../pki/files.js';
import { daysUntilExpiry, inspectCertificate, verifyIssuedBy } from '../../pki/inspect.js';

export const CLIENT_NAMES = ['api', 'worker'] as const;
export type ClientName = (typeof CLIENT_NAMES)[number];

export interface CertificateSet {
  dir: string;
  ca: KeyMaterialPaths;
  server: KeyMaterialPaths;
  clients: Record<ClientName, KeyMaterialPaths>;
  /** True when existing files were kept. */
  reused: boolean;
}

export interface EnsureCertificatesOptions {
  publicHost?: string;
  reuse?: boolean;
  validityDays?: number;
  /** Reissue when a certificate expires within this many days. */
  minRemainingDays?: number;
}

function keyMatches(pair: PemPair): boolean {
  const fromCert = new X509Certificate(pair.certPem).publicKey.export({ type: 'spki', format: 'der' });
  const fromKey = createPublicKey(createPrivateKey(pair.keyPem)).export({ type: 'spki', format: 'der' });
  return fromCert.equals(fromKey);
}

async function reusable(dir: string, publicHost: string | undefined, minDays: number): Promise<boolean> {
  try {
    const names = ['ca', 'server', ...CLIENT_NAMES];
    // The combined files are what MongoDB clients read; a set without them is incomplete.
    await Promise.all(['server', ...CLIENT_NAMES].map((n) => access(keyMaterialPaths(dir, n).combinedFile)));
    const pairs = await Promise.all(names.map((n) => readPemPair(dir, n)));
    const [ca, server, ...clients] = pairs as [PemPair, PemPair, ...PemPair[]];
    if (!inspectCertificate(ca.certPem).isCa) return false;
    for (const pair of pairs) {
      if (!keyMatches(pair) || daysUntilExpiry(pair.certPem) < minDays) return false;
      if (pair !== ca && !verifyIssuedBy(pair.certPem, ca.certPem)) return false;
    }
    const info = inspectCertificate(server.certPem);
    const wanted = serverSubjectAltNames(publicHost);
    if (!wanted.dnsNames.every((n) => info.dnsNames.includes(n))) return false;
    if (!wanted.ipAddresses.every((ip) => info.ipAddresses.includes(ip))) return false;
    if (!info.extKeyUsage.includes('serverAuth')) return false;
    return clients.every((c) => inspectCertificate(c.certPem).extKeyUsage.includes('clientAuth'));
  } catch {
    return false; // missing or unreadable files
  }
}

export async function ensureCertificates(dir: string, opts: EnsureCertificatesOptions = {}): Promise<CertificateSet> {
  const paths = (): Omit<CertificateSet, 'reused'> => ({
    dir,
    ca: keyMaterialPaths(dir, 'ca'),
    server: keyMaterialPaths(dir, 'server'),
    clients: Object.fromEntries(CLIENT_NAMES.map((n) => [n, keyMaterialPaths(dir, n)])) as Record<ClientName, KeyMaterialPaths>,
  });
  if (opts.reuse && (await reusable(dir, opts.publicHost, opts.minRemainingDays ?? 7))) return { ...paths(), reused: true };

  const validityDays = opts.validityDays;
  const ca = await createCertificateAuthority({ commonName: 'cybercom-ts local CA' });
  const [server, ...clients] = await Promise.all([
    issueServerCertificate(ca, { commonName: 'cybercom-ts services', ...serverSubjectAltNames(opts.publicHost), validityDays }),
    ...CLIENT_NAMES.map((name) => issueClientCertificate(ca, { commonName: name, validityDays })),
  ]);
  // The CA key never goes to a TLS peer: no combined file for it.
  await writeKeyMaterial(dir, 'ca', ca, { combined: false });
  await writeKeyMaterial(dir, 'server', server);
  await Promise.all(CLIENT_NAMES.map((name, i) => writeKeyMaterial(dir, name, clients[i] as PemPair)));
  return { ...paths(), reused: false };
}
