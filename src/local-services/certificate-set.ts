/**
 * The certificate set a local deployment needs: a CA, one server certificate shared by the broker
 * and the database, and one client certificate per client identity. Reused when every file is
 * present, chains to the CA, matches its key, carries the required names and is not about to
 * expire; otherwise the whole set is issued again (a new CA invalidates every old leaf anyway).
 */
import { access } from 'node:fs/promises';
import {
  createCertificateAuthority,
  issueClientCertificate,
  issueServerCertificate,
  serverSubjectAltNames,
  type PemPair,
} from '../pki/certificates.js';
import { keyMaterialPaths, readPemPair, writeKeyMaterial, type KeyMaterialPaths } from '../pki/files.js';
import { daysUntilExpiry, inspectCertificate, keyMatches, leafProblem } from '../pki/inspect.js';

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

async function reusable(dir: string, publicHost: string | undefined, minDays: number): Promise<boolean> {
  try {
    const names = ['ca', 'server', ...CLIENT_NAMES];
    // The combined files are what MongoDB clients read; a set without them is incomplete.
    await Promise.all(['server', ...CLIENT_NAMES].map((n) => access(keyMaterialPaths(dir, n).combinedFile)));
    const pairs = await Promise.all(names.map((n) => readPemPair(dir, n)));
    const [ca, server, ...clients] = pairs as [PemPair, PemPair, ...PemPair[]];
    if (!inspectCertificate(ca.certPem).isCa || !keyMatches(ca) || daysUntilExpiry(ca.certPem) < minDays) return false;
    const serverWants = { usage: 'serverAuth', names: serverSubjectAltNames(publicHost), minRemainingDays: minDays } as const;
    if (leafProblem(server, ca.certPem, serverWants) !== undefined) return false;
    return clients.every((c) => leafProblem(c, ca.certPem, { usage: 'clientAuth', minRemainingDays: minDays }) === undefined);
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
