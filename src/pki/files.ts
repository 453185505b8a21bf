/**
 * Key material on disk. Layout per name: `<name>.pem` (certificate, public), `<name>.key` (private
 * key) and `<name>-combined.pem` (certificate followed by key: the single file mongod and the
 * MongoDB driver take as `tlsCertificateKeyFile`). Writes are atomic so a reader (a broker being
 * restarted, a rotation running concurrently) never sees a half-written key.
 */
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { PemPair } from './certificates.js';

export interface KeyMaterialPaths {
  certFile: string;
  keyFile: string;
  combinedFile: string;
}

export interface WriteKeyMaterialOptions {
  /** Skip the combined file (e.g. for the CA, whose key never goes to a TLS peer). Default true. */
  combined?: boolean;
}

export function keyMaterialPaths(dir: string, name: string): KeyMaterialPaths {
  return {
    certFile: join(dir, `${name}.pem`),
    keyFile: join(dir, `${name}.key`),
    combinedFile: join(dir, `${name}-combined.pem`),
  };
}

/** Write to a temp file in the same directory with the final mode, then rename over the target. */
export async function writeFileAtomic(path: string, data: string, mode: number): Promise<void> {
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    await writeFile(tmp, data, { mode, flag: 'wx' });
    // The umask may have narrowed (or, for odd umasks, not applied) the requested mode.
    await chmod(tmp, mode);
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}

function withNewline(pem: string): string {
  return pem.endsWith('\n') ? pem : `${pem}\n`;
}

export async function writeKeyMaterial(
  dir: string,
  name: string,
  pair: PemPair,
  opts: WriteKeyMaterialOptions = {},
): Promise<KeyMaterialPaths> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  // mkdir leaves an existing directory's mode alone; private keys live here, so enforce it.
  await chmod(dir, 0o700);
  const paths = keyMaterialPaths(dir, name);
  const cert = withNewline(pair.certPem);
  const key = withNewline(pair.keyPem);
  // Key before certificate: a reader that sees the new certificate also finds its key.
  await writeFileAtomic(paths.keyFile, key, 0o600);
  if (opts.combined ?? true) await writeFileAtomic(paths.combinedFile, cert + key, 0o600);
  await writeFileAtomic(paths.certFile, cert, 0o644);
  return paths;
}

export async function readPemPair(dir: string, name: string): Promise<PemPair> {
  const paths = keyMaterialPaths(dir, name);
  const [certPem, keyPem] = await Promise.all([readFile(paths.certFile, 'utf8'), readFile(paths.keyFile, 'utf8')]);
  return { certPem, keyPem };
}
