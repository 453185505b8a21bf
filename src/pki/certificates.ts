/**
 * X.509 issuance for the appliance's private PKI: one CA, server certificates for the broker and
 * the database, client certificates for the API and the workers. This is the only module that
 * creates certificates; the installer, the rotation script and the tests all go through it.
 *
 * Field choices follow what the peers (RabbitMQ on Erlang, the Go and OpenSSL clients) check: no EKU on the
 * CA (Erlang checks a CA's EKU too), exact EKU on leaves (Go/OpenSSL/Erlang reject a client
 * certificate without clientAuth), SHA-256 everywhere (OpenSSL 3 refuses SHA-1), positive serials.
 */
import { generateKeyPair, randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import { promisify } from 'node:util';
import forge from 'node-forge';

const { pki } = forge;

export interface PemPair {
  certPem: string;
  keyPem: string;
}

/**
 * The RSA modulus length of a new key (default DEFAULT_KEY_BITS). Smaller keys are for tests
 * that are not about the key (1024 bits generate and sign many times faster); peers at OpenSSL's
 * security level 2, Debian's default, refuse keys under 2048 bits.
 */
interface KeyOptions {
  keyBits?: number;
}

export interface CaOptions extends KeyOptions {
  commonName?: string;
  validityDays?: number;
}

export interface ServerCertificateOptions extends KeyOptions {
  commonName: string;
  dnsNames: string[];
  ipAddresses: string[];
  validityDays?: number;
}

export interface ClientCertificateOptions extends KeyOptions {
  commonName: string;
  validityDays?: number;
}

export const DEFAULT_KEY_BITS = 2048;
/** The smallest key this module makes: forge and OpenSSL sign with nothing shorter. */
const MIN_KEY_BITS = 1024;
export const DEFAULT_LEAF_VALIDITY_DAYS = 365;
export const DEFAULT_CA_VALIDITY_DAYS = 3650;
/** Backdating notBefore tolerates clock skew between this host and remote workers. */
export const CLOCK_SKEW_MS = 5 * 60 * 1000;
const DAY_MS = 24 * 60 * 60 * 1000;
const ORGANIZATION = 'cybercom-ts';

const generateRsaKeyPair = promisify(generateKeyPair);

/**
 * RSA (2048 bits unless asked otherwise) via node:crypto: forge's pure-JS key generation takes
 * seconds per key, OpenSSL's a fraction of one. The key is imported into forge only to sign with it.
 */
async function newKeyPair(
  bits: number = DEFAULT_KEY_BITS,
): Promise<{ privateKey: forge.pki.rsa.PrivateKey; publicKey: forge.pki.rsa.PublicKey; keyPem: string }> {
  if (!Number.isInteger(bits) || bits < MIN_KEY_BITS)
    throw new RangeError(`keyBits must be an integer of at least ${MIN_KEY_BITS}, got ${bits}`);
  const { privateKey: keyPem } = await generateRsaKeyPair('rsa', {
    modulusLength: bits,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  const privateKey = pki.privateKeyFromPem(keyPem) as forge.pki.rsa.PrivateKey;
  const publicKey = pki.setRsaPublicKey(privateKey.n, privateKey.e);
  return { privateKey, publicKey, keyPem };
}

/** 16 random bytes with the top bit cleared: positive in DER, never longer than 20 octets (RFC 5280 4.1.2.2). */
function randomSerial(): string {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0] ?? 0) & 0x7f;
  // An all-zero leading byte would be stripped by DER encoders; keep the serial 16 bytes long.
  if (bytes[0] === 0) bytes[0] = 0x01;
  return bytes.toString('hex');
}

/** forge emits CRLF line endings; keys from node:crypto use LF. Keep every PEM we write LF-only. */
function certificateToPem(cert: forge.pki.Certificate): string {
  return pki.certificateToPem(cert).replace(/\r\n/g, '\n');
}

function validity(days: number, now = Date.now()): { notBefore: Date; notAfter: Date } {
  if (!Number.isFinite(days) || days <= 0) throw new RangeError(`validityDays must be a positive number, got ${days}`);
  const notBefore = new Date(now - CLOCK_SKEW_MS);
  return { notBefore, notAfter: new Date(notBefore.getTime() + days * DAY_MS) };
}

function subject(commonName: string): forge.pki.CertificateField[] {
  return [
    { name: 'commonName', value: commonName },
    { name: 'organizationName', value: ORGANIZATION },
  ];
}

export async function createCertificateAuthority(opts: CaOptions = {}): Promise<PemPair> {
  const { privateKey, publicKey, keyPem } = await newKeyPair(opts.keyBits);
  const cert = pki.createCertificate();
  cert.publicKey = publicKey;
  cert.serialNumber = randomSerial();
  Object.assign(cert.validity, validity(opts.validityDays ?? DEFAULT_CA_VALIDITY_DAYS));
  const name = subject(opts.commonName ?? `${ORGANIZATION} CA`);
  cert.setSubject(name);
  cert.setIssuer(name);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  cert.sign(privateKey, forge.md.sha256.create());
  return { certPem: certificateToPem(cert), keyPem };
}

/**
 * The CA's key identifier as a binary string: the one recorded in its SKI extension when present
 * (a CA made elsewhere may use another derivation), else forge's SHA-1 of the public key, which is
 * what createCertificateAuthority records.
 */
function caKeyIdentifier(caCert: forge.pki.Certificate): string {
  const ext = caCert.getExtension('subjectKeyIdentifier') as { subjectKeyIdentifier?: string } | undefined;
  if (ext?.subjectKeyIdentifier) return forge.util.hexToBytes(ext.subjectKeyIdentifier);
  return caCert.generateSubjectKeyIdentifier().getBytes();
}

type LeafKind = 'serverAuth' | 'clientAuth';

async function issueLeaf(
  ca: PemPair,
  commonName: string,
  validityDays: number,
  kind: LeafKind,
  altNames: Array<{ type: number; value?: string; ip?: string }>,
  keyBits: number | undefined,
): Promise<PemPair> {
  const caCert = pki.certificateFromPem(ca.certPem);
  const caKey = pki.privateKeyFromPem(ca.keyPem);
  const { publicKey, keyPem } = await newKeyPair(keyBits);
  const cert = pki.createCertificate();
  cert.publicKey = publicKey;
  cert.serialNumber = randomSerial();
  Object.assign(cert.validity, validity(validityDays));
  cert.setSubject(subject(commonName));
  cert.setIssuer(caCert.subject.attributes);
  const caSki = caKeyIdentifier(caCert);
  const extensions: object[] = [
    { name: 'basicConstraints', cA: false, critical: true },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', [kind]: true },
    { name: 'subjectKeyIdentifier' },
    // forge takes the key identifier as a binary string; it must match the CA's SKI for chain building.
    { name: 'authorityKeyIdentifier', keyIdentifier: caSki },
  ];
  if (altNames.length > 0) extensions.push({ name: 'subjectAltName', altNames });
  cert.setExtensions(extensions);
  cert.sign(caKey, forge.md.sha256.create());
  return { certPem: certificateToPem(cert), keyPem };
}

export async function issueServerCertificate(ca: PemPair, opts: ServerCertificateOptions): Promise<PemPair> {
  const altNames = [
    ...opts.dnsNames.map((value) => ({ type: 2, value })), // dNSName
    ...opts.ipAddresses.map((ip) => {
      if (isIP(ip) === 0) throw new TypeError(`not an IP address: ${ip}`);
      return { type: 7, ip }; // iPAddress
    }),
  ];
  if (altNames.length === 0) throw new TypeError('a server certificate needs at least one subject alternative name');
  return issueLeaf(ca, opts.commonName, opts.validityDays ?? DEFAULT_LEAF_VALIDITY_DAYS, 'serverAuth', altNames, opts.keyBits);
}

export async function issueClientCertificate(ca: PemPair, opts: ClientCertificateOptions): Promise<PemPair> {
  return issueLeaf(ca, opts.commonName, opts.validityDays ?? DEFAULT_LEAF_VALIDITY_DAYS, 'clientAuth', [], opts.keyBits);
}

/**
 * The names one server certificate must carry to serve both servers in every deployment shape:
 * local processes (localhost, loopback IPs), compose service names (mongo, rabbitmq) and the
 * public host remote workers dial (a DNS name or an IP literal).
 */
export function serverSubjectAltNames(publicHost?: string): { dnsNames: string[]; ipAddresses: string[] } {
  const dnsNames = ['localhost', 'mongo', 'rabbitmq'];
  const ipAddresses = ['127.0.0.1', '::1'];
  const host = publicHost?.trim().replace(/^\[(.*)\]$/, '$1');
  if (host) {
    if (isIP(host) !== 0) {
      if (!ipAddresses.includes(host)) ipAddresses.push(host);
    } else if (!dnsNames.includes(host.toLowerCase())) {
      dnsNames.push(host.toLowerCase());
    }
  }
  return { dnsNames, ipAddresses };
}
