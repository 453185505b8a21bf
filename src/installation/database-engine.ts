/**
 * The local runtime's database engine as ops/build-engine.sh leaves it: FerretDB v2 at the pinned
 * version in .cache/bin/ferretdb, PostgreSQL 15 from Debian, and the DocumentDB extensions built
 * from verified sources (their build stamp in PostgreSQL's library directory). Read-only checks
 * for preflight, and the source check that stops an installation before anything is changed.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { repositoryRoot } from './layout.js';

const execFileAsync = promisify(execFile);

const POSTGRES_BIN = '/usr/lib/postgresql/15/bin/postgres';
const EXTENSION_STAMP = '/usr/lib/postgresql/15/lib/cybercom-engine.build';

/** The FerretDB version pinned in ops/deps/ferretdb/go.mod. */
export function pinnedFerretDbVersion(root = repositoryRoot()): string {
  const goMod = readFileSync(join(root, 'ops', 'deps', 'ferretdb', 'go.mod'), 'utf8');
  const version = /^require github\.com\/FerretDB\/FerretDB\/v2 (\S+)/m.exec(goMod)?.[1];
  if (!version) throw new Error('ops/deps/ferretdb/go.mod pins no FerretDB v2 version');
  return version;
}

/** What of the engine is missing or stale (empty: ready to run). */
export function missingEngineParts(root = repositoryRoot()): string[] {
  const missing: string[] = [];
  if (!existsSync(POSTGRES_BIN)) missing.push('PostgreSQL 15 (Debian package postgresql-15)');
  if (!existsSync(EXTENSION_STAMP)) missing.push('DocumentDB extensions for PostgreSQL (built from verified sources)');
  if (process.env.FERRETDB_BIN === undefined) {
    const bin = join(root, '.cache', 'bin', 'ferretdb');
    const built = existsSync(`${bin}.build`) ? readFileSync(`${bin}.build`, 'utf8').trim() : undefined;
    const version = pinnedFerretDbVersion(root);
    if (!existsSync(bin) || built !== version) missing.push(`FerretDB ${version} (built into .cache/bin/ferretdb from its Go module)`);
  }
  return missing;
}

/**
 * Finds and verifies the extension sources (changes nothing). Throws with the script's own
 * message when one is missing or does not match its pinned content hash.
 */
export async function verifyEngineSources(root = repositoryRoot()): Promise<string> {
  try {
    const { stdout } = await execFileAsync('bash', [join(root, 'ops', 'build-engine.sh'), '--check-sources'], { timeout: 300_000 });
    return stdout.trim();
  } catch (err) {
    const { stderr, stdout } = err as { stderr?: string; stdout?: string };
    const message = (stderr || stdout || (err as Error).message).trim().replace(/^build-engine: (ERROR: )?/gm, '');
    throw new Error(`the database engine cannot be built: ${message}`, { cause: err });
  }
}
