/**
 * Reading certificates back: what the rotation script reports (expiry), what the installer checks
 * before reusing material (issuer, SANs), and what the tests assert. node:crypto does the parsing
 * and the signature check (OpenSSL, strict); forge only decodes the extensions node:crypto does not
 * expose in a structured way (EKU names, SAN entries, signature algorithm).
 */
import { X509Certificate, createPrivateKey, createPublicKey } from 'node:crypto';
import forge from 'node-forge';

export interface CertificateInfo {
  subject: string;
  issuer: string;
  /** Upper-case hex, as OpenSSL prints it. */
  serialNumber: string;
  notBefore: Date;
  notAfter: Date;
  dnsNames: string[];
  ipAddresses: string[];
  isCa: boolean;
  /** Short names such as 'serverAuth', 'clientAuth'; unknown purposes as dotted OIDs. */
  extKeyUsage: string[];
  /** e.g. 'sha256WithRSAEncryption'. */
  signatureAlgorithm: string;
  /** Colon-separated SHA-256 fingerprint, as OpenSSL prints it. */
  fingerprint256: string;
}

const DAY_MS = 24 * 60 * 60 * 1000;

// The purposes of RFC 5280 4.2.1.12 we name; others are reported as OIDs.
const EKU_NAMES: Record<string, string> = {
  '1.3.6.1.5.5.7.3.1': 'serverAuth',
  '1.3.6.1.5.5.7.3.2': 'clientAuth',
  '1.3.6.1.5.5.7.3.3': 'codeSigning',
  '1.3.6.1.5.5.7.3.4': 'emailProtection',
  '1.3.6.1.5.5.7.3.8': 'timeStamping',
  '1.3.6.1.5.5.7.3.9': 'OCSPSigning',
  '2.5.29.37.0': 'anyExtendedKeyUsage',
};

interface AltName {
  type: number;
  value?: string;
  ip?: string;
}

function subjectAltNames(cert: forge.pki.Certificate): { dnsNames: string[]; ipAddresses: string[] } {
  const ext = cert.getExtension('subjectAltName') as { altNames?: AltName[] } | undefined;
  const dnsNames: string[] = [];
  const ipAddresses: string[] = [];
  for (const alt of ext?.altNames ?? []) {
    if (alt.type === 2 && alt.value !== undefined) dnsNames.push(alt.value);
    if (alt.type === 7 && alt.ip !== undefined) ipAddresses.push(compressIpv6(alt.ip));
  }
  return { dnsNames, ipAddresses };
}

/** forge prints IPv6 SANs in full form (0:0:...:1); report the canonical short form ('::1'). */
function compressIpv6(ip: string): string {
  if (!ip.includes(':')) return ip;
  return new URL(`http://[${ip}]/`).hostname.slice(1, -1);
}

export function inspectCertificate(pem: string): CertificateInfo {
  const x509 = new X509Certificate(pem);
  const cert = forge.pki.certificateFromPem(pem);
  return {
    subject: x509.subject,
    issuer: x509.issuer,
    serialNumber: x509.serialNumber.toUpperCase(),
    notBefore: new Date(x509.validFrom),
    notAfter: new Date(x509.validTo),
    ...subjectAltNames(cert),
    isCa: x509.ca,
    // node:crypto's misnamed `keyUsage` is the extended key usage list (OIDs), undefined without EKU.
    extKeyUsage: (x509.keyUsage ?? []).map((oid) => EKU_NAMES[oid] ?? oid),
    signatureAlgorithm: forge.pki.oids[cert.siginfo.algorithmOid] ?? cert.siginfo.algorithmOid,
    fingerprint256: x509.fingerprint256,
  };
}

/** Whole days left before notAfter (negative once expired): what the rotation script warns on. */
export function daysUntilExpiry(pem: string, now: Date = new Date()): number {
  const notAfter = new Date(new X509Certificate(pem).validTo);
  return Math.floor((notAfter.getTime() - now.getTime()) / DAY_MS);
}

/** True when caPem's subject issued certPem and caPem's key signed it. Does not check validity dates. */
export function verifyIssuedBy(certPem: string, caPem: string): boolean {
  try {
    const cert = new X509Certificate(certPem);
    const ca = new X509Certificate(caPem);
    return cert.checkIssued(ca) && cert.verify(ca.publicKey);
  } catch {
    return false;
  }
}

/** True when the certificate of `pair` carries the public half of its private key. */
export function keyMatches(pair: { certPem: string; keyPem: string }): boolean {
  const fromCert = new X509Certificate(pair.certPem).publicKey.export({ type: 'spki', format: 'der' });
  const fromKey = createPublicKey(createPrivateKey(pair.keyPem)).export({ type: 'spki', format: 'der' });
  return fromCert.equals(fromKey);
}

export interface LeafRequirements {
  usage: 'serverAuth' | 'clientAuth';
  /** Names a server certificate must carry (more are fine). */
  names?: { dnsNames: string[]; ipAddresses: string[] };
  /** Reissue when it expires within this many days. */
  minRemainingDays: number;
  /** How the CA is called in the reason, e.g. "client CA". */
  issuer?: string;
}

/**
 * Why an existing leaf certificate cannot be kept, or undefined when it can: its key, its issuer,
 * its remaining validity, its extended key usage and (for servers) its names. Throws on PEM text
 * that does not parse.
 */
export function leafProblem(pair: { certPem: string; keyPem: string }, caPem: string, want: LeafRequirements): string | undefined {
  if (!keyMatches(pair)) return 'key does not match';
  if (!verifyIssuedBy(pair.certPem, caPem)) return `not issued by the ${want.issuer ?? 'CA'}`;
  if (daysUntilExpiry(pair.certPem) < want.minRemainingDays) return `expires within ${want.minRemainingDays} days`;
  const info = inspectCertificate(pair.certPem);
  if (!info.extKeyUsage.includes(want.usage)) return `lacks ${want.usage}`;
  if (want.names !== undefined) {
    const missing = [
      ...want.names.dnsNames.filter((n) => !info.dnsNames.includes(n)),
      ...want.names.ipAddresses.filter((ip) => !info.ipAddresses.includes(ip)),
    ];
    if (missing.length > 0) return `lacks the names ${missing.join(', ')}`;
  }
  return undefined;
}
