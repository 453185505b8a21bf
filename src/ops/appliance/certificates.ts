/**
 * The installation's certificates, in certs/ (0700): one private CA, a server certificate each
 * for RabbitMQ and MongoDB, and client certificates for the API and the workers. Issued with the
 * one PKI module (src/pki); this file only decides which certificate exists under which name,
 * which names it must carry, and when an existing one can be kept.
 */
import { X509Certificate, createPrivateKey, createPublicKey } from 'node:crypto';
import { access, readFile, readdir } from 'node:fs/promises';
import {
  DEFAULT_CA_VALIDITY_DAYS,
  createCertificateAuthority,
  issueClientCertificate,
  issueServerCertificate,
  type PemPair,
} from '../../pki/certificates.js';
import { keyMaterialPaths, readPemPair, writeKeyMaterial, type KeyMaterialPaths } from '../../pki/files.js';
import { daysUntilExpiry, inspectCertificate, verifyIssuedBy } from '../../pki/inspect.js';
import { isIP } from 'node:net';

export type CertificateRole = 'ca' | 'server' | 'client';

export interface CertificateSpec {
  name: string;
  role: CertificateRole;
  /** Who presents it. */
  usedBy: string;
  /** Compose service name the server is dialled by inside the stack. */
  serviceName?: string;
}

export const CERTIFICATE_SPECS: readonly CertificateSpec[] = [
  { name: 'ca', role: 'ca', usedBy: 'trust anchor of every peer' },
  { name: 'rabbitmq', role: 'server', usedBy: 'RabbitMQ (AMQPS)', serviceName: 'rabbitmq' },
  { name: 'mongodb', role: 'server', usedBy: 'MongoDB (TLS)', serviceName: 'mongo' },
  { name: 'api', role: 'client', usedBy: 'API server' },
  { name: 'worker', role: 'client', usedBy: 'workers (local and remote)' },
];

/** A leaf closer to expiry than this is re-issued by the installer (rotate-certs uses its own threshold). */
export const REISSUE_WITHIN_DAYS = 30;

export type CertificateAction = 'kept' | 'issued';

export function certificatePaths(certsDir: string, name: string): KeyMaterialPaths {
  return keyMaterialPaths(certsDir, name);
}

/** DNS and IP names a server certificate must carry (local processes, compose, remote workers). */
export function serverNames(spec: CertificateSpec, publicHost: string): { dnsNames: string[]; ipAddresses: string[] } {
  const dnsNames = ['localhost', ...(spec.serviceName ? [spec.serviceName] : [])];
  const ipAddresses = ['127.0.0.1', '::1'];
  const host = publicHost.trim().replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (host !== '') {
    if (isIP(host) !== 0) {
      if (!ipAddresses.includes(host)) ipAddresses.push(host);
    } else if (!dnsNames.includes(host)) {
      dnsNames.push(host);
    }
  }
  return { dnsNames, ipAddresses };
}

function keyMatches(pair: PemPair): boolean {
  const fromCert = new X509Certificate(pair.certPem).publicKey.export({ type: 'spki', format: 'der' });
  const fromKey = createPublicKey(createPrivateKey(pair.keyPem)).export({ type: 'spki', format: 'der' });
  return fromCert.equals(fromKey);
}

async function readPair(certsDir: string, name: string): Promise<PemPair | undefined> {
  try {
    return await readPemPair(certsDir, name);
  } catch {
    return undefined;
  }
}

function caUsable(ca: PemPair | undefined): ca is PemPair {
  try {
    return !!ca && inspectCertificate(ca.certPem).isCa && keyMatches(ca) && daysUntilExpiry(ca.certPem) >= REISSUE_WITHIN_DAYS;
  } catch {
    return false;
  }
}

/** Why an existing leaf cannot be kept, or undefined when it can. */
async function leafProblem(certsDir: string, spec: CertificateSpec, ca: PemPair, publicHost: string): Promise<string | undefined> {
  const pair = await readPair(certsDir, spec.name);
  if (!pair) return 'missing';
  try {
    await access(keyMaterialPaths(certsDir, spec.name).combinedFile);
    if (!keyMatches(pair)) return 'key does not match';
    if (!verifyIssuedBy(pair.certPem, ca.certPem)) return 'not issued by the CA';
    if (daysUntilExpiry(pair.certPem) < REISSUE_WITHIN_DAYS) return `expires within ${REISSUE_WITHIN_DAYS} days`;
    const info = inspectCertificate(pair.certPem);
    const wantedUsage = spec.role === 'server' ? 'serverAuth' : 'clientAuth';
    if (!info.extKeyUsage.includes(wantedUsage)) return `lacks ${wantedUsage}`;
    if (spec.role === 'server') {
      const wanted = serverNames(spec, publicHost);
      const missing = [...wanted.dnsNames.filter((n) => !info.dnsNames.includes(n)), ...wanted.ipAddresses.filter((ip) => !info.ipAddresses.includes(ip))];
      if (missing.length > 0) return `lacks the names ${missing.join(', ')}`;
    }
    return undefined;
  } catch (err) {
    return `unreadable (${(err as Error).message})`;
  }
}

async function issue(ca: PemPair, spec: CertificateSpec, publicHost: string, validityDays: number): Promise<PemPair> {
  if (spec.role === 'server') {
    return issueServerCertificate(ca, { commonName: `cybercom ${spec.name}`, ...serverNames(spec, publicHost), validityDays });
  }
  return issueClientCertificate(ca, { commonName: `cybercom-${spec.name}`, validityDays });
}

export interface EnsureCertificatesOptions {
  publicHost: string;
  validityDays: number;
  /** Re-issue everything, CA included (`--force-certs`). */
  force?: boolean;
}

/**
 * Keeps every valid certificate; issues what is missing, invalid, about to expire or lacking a
 * name (e.g. after the public host changed). A new CA means every leaf is issued again.
 */
export async function ensureCertificates(certsDir: string, opts: EnsureCertificatesOptions): Promise<Record<string, CertificateAction>> {
  const actions: Record<string, CertificateAction> = {};
  let ca = opts.force ? undefined : await readPair(certsDir, 'ca');
  const newCa = !caUsable(ca);
  if (newCa) {
    ca = await createCertificateAuthority({ commonName: 'cybercom CA', validityDays: Math.max(DEFAULT_CA_VALIDITY_DAYS, opts.validityDays) });
  }
  const authority = ca as PemPair;
  for (const spec of CERTIFICATE_SPECS) {
    if (spec.role === 'ca') continue;
    const problem = newCa ? 'new CA' : await leafProblem(certsDir, spec, authority, opts.publicHost);
    if (problem === undefined) {
      actions[spec.name] = 'kept';
      continue;
    }
    await writeKeyMaterial(certsDir, spec.name, await issue(authority, spec, opts.publicHost, opts.validityDays));
    actions[spec.name] = 'issued';
  }
  // The CA last: until here a crash leaves the old CA with (some) new leaves it did not sign,
  // which the next run detects and repairs; never a new CA beside leaves it does not know.
  if (newCa) await writeKeyMaterial(certsDir, 'ca', authority, { combined: false });
  actions.ca = newCa ? 'issued' : 'kept';
  return actions;
}

export interface ReissueOptions {
  publicHost: string;
  validityDays: number;
  newCa: boolean;
}

/** Every leaf issued again (rotation), from the existing CA or from a new one. */
export async function reissueCertificates(certsDir: string, opts: ReissueOptions): Promise<void> {
  const existing = await readPair(certsDir, 'ca');
  let ca: PemPair;
  if (opts.newCa || !caUsable(existing)) {
    ca = await createCertificateAuthority({ commonName: 'cybercom CA', validityDays: Math.max(DEFAULT_CA_VALIDITY_DAYS, opts.validityDays) });
  } else {
    ca = existing;
  }
  const leaves = await Promise.all(
    CERTIFICATE_SPECS.filter((s) => s.role !== 'ca').map(async (spec) => ({ spec, pair: await issue(ca, spec, opts.publicHost, opts.validityDays) })),
  );
  for (const { spec, pair } of leaves) await writeKeyMaterial(certsDir, spec.name, pair);
  if (ca !== existing) await writeKeyMaterial(certsDir, 'ca', ca, { combined: false });
}

export interface CertificateReport {
  name: string;
  file: string;
  usedBy: string;
  subject: string;
  issuer: string;
  dnsNames: string[];
  ipAddresses: string[];
  extKeyUsage: string[];
  notBefore: string;
  notAfter: string;
  daysLeft: number;
  /** Chains to the installation's CA (always true for the CA itself when self-signed). */
  issuedByCa: boolean;
}

/** Every certificate in certs/: the known ones first, then any other *.pem holding a certificate. */
export async function inspectCertificates(certsDir: string, now = new Date()): Promise<CertificateReport[]> {
  const files = (await readdir(certsDir)).filter((f) => f.endsWith('.pem') && !f.endsWith('-combined.pem'));
  const known = CERTIFICATE_SPECS.map((s) => s.name);
  const names = [...known.filter((n) => files.includes(`${n}.pem`)), ...files.map((f) => f.slice(0, -4)).filter((n) => !known.includes(n)).sort()];
  const caPair = await readPair(certsDir, 'ca');
  const reports: CertificateReport[] = [];
  for (const name of names) {
    const file = keyMaterialPaths(certsDir, name).certFile;
    const pem = await readFile(file, 'utf8');
    const info = inspectCertificate(pem);
    reports.push({
      name,
      file,
      usedBy: CERTIFICATE_SPECS.find((s) => s.name === name)?.usedBy ?? '',
      subject: info.subject.replace(/\n/g, ', '),
      issuer: info.issuer.replace(/\n/g, ', '),
      dnsNames: info.dnsNames,
      ipAddresses: info.ipAddresses,
      extKeyUsage: info.extKeyUsage,
      notBefore: info.notBefore.toISOString(),
      notAfter: info.notAfter.toISOString(),
      daysLeft: daysUntilExpiry(pem, now),
      issuedByCa: caPair ? verifyIssuedBy(pem, caPair.certPem) : false,
    });
  }
  return reports;
}
