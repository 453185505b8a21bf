/**
 * The installation's certificates, in certs/ (0700): two private CAs, a server certificate each
 * for RabbitMQ and MongoDB, and client certificates for the API and the workers. Issued with the
 * one PKI module (src/pki); this file only decides which certificate exists under which name,
 * which CA signs it, which names it must carry, and when an existing one can be kept.
 *
 * Why two CAs: without revocation lists (FerretDB cannot check any), the only way to make a
 * server refuse an old client certificate is to stop trusting its issuer. So the servers verify
 * clients against the client CA alone, and a rotation replaces the client CA: the new client
 * certificates are accepted, every earlier one is refused at once (a renewal, --keep-client-ca,
 * keeps it). The server CA, which every
 * client trusts to verify the servers, stays (unless --new-ca), so remote workers only need their
 * new client certificate, and nothing else they trust changes under them.
 */
import { access, readFile, readdir } from 'node:fs/promises';
import {
  DEFAULT_CA_VALIDITY_DAYS,
  createCertificateAuthority,
  issueClientCertificate,
  issueServerCertificate,
  type PemPair,
} from '../pki/certificates.js';
import { keyMaterialPaths, readPemPair, writeKeyMaterial, type KeyMaterialPaths } from '../pki/files.js';
import { daysUntilExpiry, inspectCertificate, keyMatches, leafProblem, verifyIssuedBy } from '../pki/inspect.js';
import { isIP } from 'node:net';
import type { Topology } from './install-config.js';
import { REPLICA_SET_MEMBERS } from './replica-set.js';
import { BROKER_CLUSTER_NODES } from './broker-cluster.js';

export type CertificateRole = 'ca' | 'server' | 'client';
/** The installation's two authorities (file names in certs/). */
export type AuthorityName = 'ca' | 'client-ca';

export interface CertificateSpec {
  name: string;
  role: CertificateRole;
  /** The CA that signs it; a CA names itself. */
  issuer: AuthorityName;
  /** Who presents it. */
  usedBy: string;
  /** Compose service name the server is dialled by inside the stack. */
  serviceName?: string;
  /** Further service names of the cluster topology (the other members of the server's cluster). */
  clusterServiceNames?: readonly string[];
}

export const CERTIFICATE_SPECS: readonly CertificateSpec[] = [
  { name: 'ca', role: 'ca', issuer: 'ca', usedBy: 'server CA: signs the broker and database certificates; every client trusts it' },
  {
    name: 'client-ca',
    role: 'ca',
    issuer: 'client-ca',
    usedBy: 'client CA: the only issuer of client certificates the servers accept; replaced by rotate-certs unless --keep-client-ca',
  },
  {
    name: 'rabbitmq',
    role: 'server',
    issuer: 'ca',
    usedBy: 'RabbitMQ (AMQPS)',
    serviceName: 'rabbitmq',
    clusterServiceNames: BROKER_CLUSTER_NODES.filter((n) => n !== 'rabbitmq'),
  },
  {
    name: 'mongodb',
    role: 'server',
    issuer: 'ca',
    usedBy: 'MongoDB (TLS)',
    serviceName: 'mongo',
    clusterServiceNames: REPLICA_SET_MEMBERS.filter((m) => m !== 'mongo'),
  },
  { name: 'api', role: 'client', issuer: 'client-ca', usedBy: 'API server' },
  { name: 'worker', role: 'client', issuer: 'client-ca', usedBy: 'workers (local and remote)' },
];

const AUTHORITY_COMMON_NAMES: Record<AuthorityName, string> = { ca: 'cybercom CA', 'client-ca': 'cybercom client CA' };

/** A leaf closer to expiry than this is re-issued by the installer (rotate-certs uses its own threshold). */
export const REISSUE_WITHIN_DAYS = 30;

/** `adopted`: an installation from before the client CA had its client certificates signed by the server CA; that CA is copied as the client CA until the next rotation separates them. */
export type CertificateAction = 'kept' | 'issued' | 'adopted';

export function certificatePaths(certsDir: string, name: string): KeyMaterialPaths {
  return keyMaterialPaths(certsDir, name);
}

/**
 * DNS and IP names a server certificate must carry (local processes, compose, remote workers).
 * In the cluster topology the members of a cluster share their server's certificate, so it
 * names them all.
 */
export function serverNames(
  spec: CertificateSpec,
  publicHost: string,
  topology: Topology = 'single',
): { dnsNames: string[]; ipAddresses: string[] } {
  const members = topology === 'cluster' ? (spec.clusterServiceNames ?? []) : [];
  const dnsNames = ['localhost', ...(spec.serviceName ? [spec.serviceName] : []), ...members];
  const ipAddresses = ['127.0.0.1', '::1'];
  const host = publicHost
    .trim()
    .replace(/^\[(.*)\]$/, '$1')
    .toLowerCase();
  if (host !== '') {
    if (isIP(host) !== 0) {
      if (!ipAddresses.includes(host)) ipAddresses.push(host);
    } else if (!dnsNames.includes(host)) {
      dnsNames.push(host);
    }
  }
  return { dnsNames, ipAddresses };
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

function newAuthority(name: AuthorityName, validityDays: number, keyBits?: number): Promise<PemPair> {
  return createCertificateAuthority({
    commonName: AUTHORITY_COMMON_NAMES[name],
    validityDays: Math.max(DEFAULT_CA_VALIDITY_DAYS, validityDays),
    keyBits,
  });
}

const leafSpecs = (): CertificateSpec[] => CERTIFICATE_SPECS.filter((s) => s.role !== 'ca');

/** Why an existing leaf cannot be kept (missing files included), or undefined when it can. */
async function storedLeafProblem(
  certsDir: string,
  spec: CertificateSpec,
  ca: PemPair,
  publicHost: string,
  topology: Topology,
): Promise<string | undefined> {
  const pair = await readPair(certsDir, spec.name);
  if (!pair) return 'missing';
  try {
    await access(keyMaterialPaths(certsDir, spec.name).combinedFile);
    return leafProblem(pair, ca.certPem, {
      usage: spec.role === 'server' ? 'serverAuth' : 'clientAuth',
      names: spec.role === 'server' ? serverNames(spec, publicHost, topology) : undefined,
      minRemainingDays: REISSUE_WITHIN_DAYS,
      issuer: spec.issuer,
    });
  } catch (err) {
    return `unreadable (${(err as Error).message})`;
  }
}

async function issue(
  ca: PemPair,
  spec: CertificateSpec,
  publicHost: string,
  validityDays: number,
  topology: Topology,
  keyBits: number | undefined,
): Promise<PemPair> {
  if (spec.role === 'server') {
    return issueServerCertificate(ca, {
      commonName: `cybercom ${spec.name}`,
      ...serverNames(spec, publicHost, topology),
      validityDays,
      keyBits,
    });
  }
  return issueClientCertificate(ca, { commonName: `cybercom-${spec.name}`, validityDays, keyBits });
}

/** An authority as the run found or made it: `fresh` ones invalidate every leaf they sign. */
interface Authority {
  pair: PemPair;
  action: CertificateAction;
}

/**
 * The client CA to keep or make. An installation made before the client CA existed has none, and
 * its client certificates chain to the server CA: adopt that CA as the client CA (a copy), so an
 * upgrade changes no certificate a remote worker holds; the next rotation separates the two.
 */
async function clientAuthority(certsDir: string, server: Authority, validityDays: number, keyBits?: number): Promise<Authority> {
  if (server.action === 'issued') return { pair: await newAuthority('client-ca', validityDays, keyBits), action: 'issued' };
  const existing = await readPair(certsDir, 'client-ca');
  if (caUsable(existing)) return { pair: existing, action: 'kept' };
  const worker = existing === undefined ? await readPair(certsDir, 'worker') : undefined;
  if (worker && verifyIssuedBy(worker.certPem, server.pair.certPem)) return { pair: server.pair, action: 'adopted' };
  return { pair: await newAuthority('client-ca', validityDays, keyBits), action: 'issued' };
}

/** The CAs last: until then a crash leaves the old CAs with (some) new leaves they did not sign, which the next run detects and repairs; never a new CA beside leaves it does not know. */
async function writeAuthorities(certsDir: string, authorities: Record<AuthorityName, Authority>): Promise<void> {
  for (const name of ['client-ca', 'ca'] as const) {
    if (authorities[name].action !== 'kept') await writeKeyMaterial(certsDir, name, authorities[name].pair, { combined: false });
  }
}

export interface EnsureCertificatesOptions {
  publicHost: string;
  validityDays: number;
  /** Re-issue everything, CAs included (`--force-certs`). */
  force?: boolean;
  /** Default single; cluster adds the replica set's member names to the database's certificate. */
  topology?: Topology;
  /** RSA key size of new keys (default 2048; see src/pki/certificates.ts). */
  keyBits?: number;
}

/**
 * Keeps every valid certificate; issues what is missing, invalid, about to expire or lacking a
 * name (e.g. after the public host changed). A new CA means every leaf it signs is issued again.
 */
export async function ensureCertificates(certsDir: string, opts: EnsureCertificatesOptions): Promise<Record<string, CertificateAction>> {
  const existingCa = opts.force ? undefined : await readPair(certsDir, 'ca');
  const server: Authority = caUsable(existingCa)
    ? { pair: existingCa, action: 'kept' }
    : { pair: await newAuthority('ca', opts.validityDays, opts.keyBits), action: 'issued' };
  const authorities: Record<AuthorityName, Authority> = {
    ca: server,
    'client-ca': await clientAuthority(certsDir, server, opts.validityDays, opts.keyBits),
  };
  const actions: Record<string, CertificateAction> = {};
  for (const spec of leafSpecs()) {
    const issuer = authorities[spec.issuer];
    const topology = opts.topology ?? 'single';
    const problem = issuer.action === 'issued' ? 'new CA' : await storedLeafProblem(certsDir, spec, issuer.pair, opts.publicHost, topology);
    if (problem === undefined) {
      actions[spec.name] = 'kept';
      continue;
    }
    await writeKeyMaterial(certsDir, spec.name, await issue(issuer.pair, spec, opts.publicHost, opts.validityDays, topology, opts.keyBits));
    actions[spec.name] = 'issued';
  }
  await writeAuthorities(certsDir, authorities);
  actions.ca = server.action;
  actions['client-ca'] = authorities['client-ca'].action;
  return actions;
}

export interface ReissueOptions {
  publicHost: string;
  validityDays: number;
  /** A new server CA too. */
  newCa: boolean;
  /**
   * Renewal rather than rotation: the client certificates are issued from the current client CA,
   * so earlier ones stay accepted until they expire (the scheduled renewal uses it, so remote
   * workers keep working until they get the new bundle). Ignored when the client CA is unusable.
   */
  keepClientCa?: boolean;
  /** As for ensureCertificates. */
  topology?: Topology;
  keyBits?: number;
}

/**
 * Rotation: every leaf issued again. The client CA is new unless `keepClientCa` (so every earlier
 * client certificate is refused from now on); the server CA is new only with `newCa` (or when
 * unusable).
 */
export async function reissueCertificates(certsDir: string, opts: ReissueOptions): Promise<Record<AuthorityName, CertificateAction>> {
  const existing = await readPair(certsDir, 'ca');
  const existingClientCa = opts.keepClientCa ? await readPair(certsDir, 'client-ca') : undefined;
  const keepServerCa = !opts.newCa && caUsable(existing);
  const authorities: Record<AuthorityName, Authority> = {
    ca: keepServerCa
      ? { pair: existing, action: 'kept' }
      : { pair: await newAuthority('ca', opts.validityDays, opts.keyBits), action: 'issued' },
    'client-ca':
      keepServerCa && caUsable(existingClientCa)
        ? { pair: existingClientCa, action: 'kept' }
        : { pair: await newAuthority('client-ca', opts.validityDays, opts.keyBits), action: 'issued' },
  };
  const leaves = await Promise.all(
    leafSpecs().map(async (spec) => ({
      spec,
      pair: await issue(authorities[spec.issuer].pair, spec, opts.publicHost, opts.validityDays, opts.topology ?? 'single', opts.keyBits),
    })),
  );
  for (const { spec, pair } of leaves) await writeKeyMaterial(certsDir, spec.name, pair);
  await writeAuthorities(certsDir, authorities);
  return { ca: authorities.ca.action, 'client-ca': authorities['client-ca'].action };
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
  /** Chains to the installation's CA that should sign it (a CA: to itself); others: to either CA. */
  issuedByCa: boolean;
}

/** Every certificate in certs/: the known ones first, then any other *.pem holding a certificate. */
export async function inspectCertificates(certsDir: string, now = new Date()): Promise<CertificateReport[]> {
  const files = (await readdir(certsDir)).filter((f) => f.endsWith('.pem') && !f.endsWith('-combined.pem'));
  const known = CERTIFICATE_SPECS.map((s) => s.name);
  const names = [
    ...known.filter((n) => files.includes(`${n}.pem`)),
    ...files
      .map((f) => f.slice(0, -4))
      .filter((n) => !known.includes(n))
      .sort(),
  ];
  const authorities: Record<AuthorityName, PemPair | undefined> = {
    ca: await readPair(certsDir, 'ca'),
    'client-ca': await readPair(certsDir, 'client-ca'),
  };
  /** The CA that should have signed `name`; for a file we do not know, either. */
  const issuersOf = (name: string): PemPair[] => {
    const spec = CERTIFICATE_SPECS.find((s) => s.name === name);
    return (spec ? [authorities[spec.issuer]] : Object.values(authorities)).filter((p): p is PemPair => p !== undefined);
  };
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
      issuedByCa: issuersOf(name).some((ca) => verifyIssuedBy(pem, ca.certPem)),
    });
  }
  return reports;
}
