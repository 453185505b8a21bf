/**
 * Password hashing with scrypt (memory-hard, built into node:crypto, so no native add-on).
 * Stored form: `scrypt$<N>$<r>$<p>$<salt b64>$<hash b64>`; the parameters travel with each hash
 * so they can be raised later without invalidating existing passwords (see needsRehash).
 */
import { randomBytes, scrypt as scryptCallback, timingSafeEqual, type ScryptOptions } from 'node:crypto';

export interface ScryptParameters {
  /** CPU/memory cost, a power of two. */
  N: number;
  r: number;
  p: number;
}

/** 2^15 × 8 × 128 B = 32 MiB and roughly 50–100 ms per hash: strong, yet tests stay quick. */
export const CURRENT_PARAMETERS: Readonly<ScryptParameters> = Object.freeze({ N: 2 ** 15, r: 8, p: 1 });

const KEY_LENGTH = 32;
const SALT_LENGTH = 16;
/** Upper bounds for parameters read back from the database: a tampered row must not exhaust memory. */
const MAX_N = 2 ** 20;
const MAX_R = 32;
const MAX_P = 16;

/** Marks an account that cannot log in with a password (created without one), like Django's "!". */
export const UNUSABLE_PASSWORD_PREFIX = '!';

function scrypt(password: string, salt: Buffer, keyLength: number, params: ScryptParameters): Promise<Buffer> {
  // maxmem must exceed 128·N·r, otherwise node refuses; twice that leaves headroom for p > 1.
  const options: ScryptOptions = { N: params.N, r: params.r, p: params.p, maxmem: 256 * params.N * params.r * params.p };
  return new Promise((resolve, reject) => {
    scryptCallback(password.normalize('NFKC'), salt, keyLength, options, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

export async function hashPassword(password: string, params: ScryptParameters = CURRENT_PARAMETERS): Promise<string> {
  const salt = randomBytes(SALT_LENGTH);
  const key = await scrypt(password, salt, KEY_LENGTH, params);
  return ['scrypt', params.N, params.r, params.p, salt.toString('base64'), key.toString('base64')].join('$');
}

interface DecodedHash {
  params: ScryptParameters;
  salt: Buffer;
  key: Buffer;
}

function decode(encoded: string): DecodedHash | null {
  const parts = encoded.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return null;
  const [N, r, p] = [Number(parts[1]), Number(parts[2]), Number(parts[3])];
  const validN = Number.isInteger(N) && N > 1 && N <= MAX_N && (N & (N - 1)) === 0;
  if (!validN || !Number.isInteger(r) || r < 1 || r > MAX_R || !Number.isInteger(p) || p < 1 || p > MAX_P) return null;
  const salt = Buffer.from(parts[4] ?? '', 'base64');
  const key = Buffer.from(parts[5] ?? '', 'base64');
  if (salt.length < 8 || key.length < 16) return null;
  return { params: { N, r, p }, salt, key };
}

/** Hash used when the account does not exist, so "no such user" takes as long as "wrong password". */
let decoyHash: Promise<string> | undefined;

/**
 * True when `password` matches `encoded`. Unusable or malformed hashes never match, but still
 * cost one scrypt run so the response time does not reveal which accounts exist.
 */
export async function verifyPassword(password: string, encoded: string | null | undefined): Promise<boolean> {
  const decoded = typeof encoded === 'string' ? decode(encoded) : null;
  if (decoded === null) {
    decoyHash ??= hashPassword('decoy password for timing equalisation');
    const decoy = decode(await decoyHash) as DecodedHash;
    await scrypt(password, decoy.salt, decoy.key.length, decoy.params);
    return false;
  }
  const candidate = await scrypt(password, decoded.salt, decoded.key.length, decoded.params);
  return timingSafeEqual(candidate, decoded.key);
}

/** True when a valid hash was made with other parameters than today's: re-hash after a good login. */
export function needsRehash(encoded: string): boolean {
  const decoded = decode(encoded);
  if (decoded === null) return false;
  const { N, r, p } = decoded.params;
  return N !== CURRENT_PARAMETERS.N || r !== CURRENT_PARAMETERS.r || p !== CURRENT_PARAMETERS.p;
}

export function isUsablePasswordHash(encoded: string | null | undefined): boolean {
  return typeof encoded === 'string' && decode(encoded) !== null;
}

/** A random, never-matching stored value for accounts without a password. */
export function unusablePassword(): string {
  return UNUSABLE_PASSWORD_PREFIX + randomBytes(20).toString('base64url');
}
