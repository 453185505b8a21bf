/**
 * The engine's sources are verified by the content of their extracted trees before anything is
 * built: from a directory of archives, a directory of extracted trees, or one archive of such a
 * directory. A missing or altered source stops with a message naming it, and changes nothing.
 */
import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyEngineSources } from '../../../src/installation/database-engine.js';

const execFileAsync = promisify(execFile);
const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const vendor = join(repoRoot, '..', 'shared', 'vendor');
const script = join(repoRoot, 'ops', 'build-engine.sh');
const NAMES = ['pg_cron', 'pgvector', 'documentdb'];

let work: string;

async function checkSources(sources: string): Promise<{ code: number; out: string }> {
  try {
    const { stdout, stderr } = await execFileAsync('bash', [script, '--check-sources', '--sources', sources], { timeout: 300_000 });
    return { code: 0, out: stdout + stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, out: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

async function archivesCopy(name: string): Promise<string> {
  const dir = join(work, name);
  await mkdir(dir, { recursive: true });
  for (const file of await readdir(vendor)) if (file.endsWith('.tar.gz')) await cp(join(vendor, file), join(dir, file));
  return dir;
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'cybercom-engine-src-'));
  await stat(vendor).catch(() => {
    throw new Error(`the vendored engine sources are expected at ${vendor}`);
  });
});

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

describe('ops/build-engine.sh --check-sources', () => {
  it('verifies a directory of the pinned archives', async () => {
    const result = await checkSources(await archivesCopy('archives'));
    expect(result.code, result.out).toBe(0);
    for (const name of NAMES) expect(result.out).toMatch(new RegExp(`source ${name} \\S+: verified`));
  });

  it('verifies extracted trees and one archive of the whole directory', async () => {
    const trees = join(work, 'trees');
    await mkdir(trees);
    for (const file of await readdir(vendor)) {
      if (!file.endsWith('.tar.gz')) continue;
      const dest = join(trees, file.replace(/\.tar\.gz$/, ''));
      await mkdir(dest);
      await execFileAsync('tar', ['-xzf', join(vendor, file), '-C', dest, '--strip-components=1']);
    }
    const fromTrees = await checkSources(trees);
    expect(fromTrees.code, fromTrees.out).toBe(0);
    const bundle = join(work, 'bundle.tar.gz');
    await execFileAsync('tar', ['-czf', bundle, '-C', work, 'trees']);
    const fromBundle = await checkSources(bundle);
    expect(fromBundle.code, fromBundle.out).toBe(0);
    expect(fromBundle.out).toContain('verified');
  });

  it('refuses an altered source, naming it and both hashes', async () => {
    const dir = await archivesCopy('altered');
    const archive = (await readdir(dir)).find((f) => f.startsWith('pg_cron-')) as string;
    const unpacked = join(work, 'unpacked');
    await mkdir(unpacked);
    await execFileAsync('tar', ['-xzf', join(dir, archive), '-C', unpacked]);
    const top = (await readdir(unpacked))[0] as string;
    await writeFile(join(unpacked, top, 'src', 'pg_cron.c'), '/* changed */\n', { flag: 'a' });
    await execFileAsync('tar', ['-czf', join(dir, archive), '-C', unpacked, top]);
    const result = await checkSources(dir);
    expect(result.code).not.toBe(0);
    expect(result.out).toMatch(
      /pg_cron from .* does not match the pinned content \(tree sha256 [0-9a-f]{64}, expected [0-9a-f]{64}\); nothing was built or installed/,
    );
    await expect(verifyEngineSources()).resolves.toContain('verified'); // the real sources still pass
  });

  it('refuses a directory without one of the sources', async () => {
    const dir = await archivesCopy('incomplete');
    for (const file of await readdir(dir)) if (file.startsWith('documentdb-')) await rm(join(dir, file));
    const result = await checkSources(dir);
    expect(result.code).not.toBe(0);
    expect(result.out).toContain(`no documentdb archive or directory in ${dir}`);
  });
});
