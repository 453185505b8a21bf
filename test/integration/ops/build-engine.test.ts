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

/**
 * Two builds at once on one machine (an install beside a test run) share the user cache and the
 * checkout's .cache/bin. FerretDB's `go build` is stood in for by a `go` on PATH that writes a
 * small program slowly (its real build takes minutes), so the two runs overlap where a real
 * build's would: both building the same cached binary and installing it into .cache/bin.
 */
describe('ops/build-engine.sh run twice side by side', () => {
  const FAKE_GO = `#!/usr/bin/env bash
set -euo pipefail
case "$1 \${2:-}" in
  "mod download") exit 0 ;;
  "list -m") echo "$FAKE_MODULE_DIR"; exit 0 ;;
esac
out=""
while [[ $# -gt 0 ]]; do if [[ $1 == -o ]]; then out="$2"; shift; fi; shift; done
printf '#!/bin/sh\\n' >"$out"
sleep 2
printf 'echo "FerretDB version: stand-in"\\n' >>"$out"
chmod +x "$out"
`;

  it('both succeed, one after the other, and leave a whole binary that runs', async () => {
    const root = join(work, 'side-by-side');
    const checkout = join(root, 'checkout');
    await mkdir(join(root, 'bin'), { recursive: true });
    await cp(join(repoRoot, 'ops'), join(checkout, 'ops'), { recursive: true });
    await writeFile(join(root, 'bin', 'go'), FAKE_GO, { mode: 0o755 });
    const moduleDir = join(root, 'module');
    await mkdir(join(moduleDir, 'build', 'version'), { recursive: true });
    const env = {
      ...process.env,
      PATH: `${join(root, 'bin')}:${process.env.PATH ?? ''}`,
      FAKE_MODULE_DIR: moduleDir,
      CYBERCOM_CACHE_DIR: join(root, 'cache'),
      ENGINE_SOURCES: vendor,
    };
    const build = () =>
      execFileAsync('bash', [join(checkout, 'ops', 'build-engine.sh')], { env, timeout: 300_000 }).then(
        ({ stdout, stderr }) => ({ code: 0, out: stdout + stderr }),
        (err: { code?: number; stdout?: string; stderr?: string }) => ({
          code: err.code ?? -1,
          out: `${err.stdout ?? ''}${err.stderr ?? ''}`,
        }),
      );
    const [first, second] = await Promise.all([build(), build()]);
    expect(first.code, first.out).toBe(0);
    expect(second.code, second.out).toBe(0);
    // One of them built it, the other found it built.
    expect([first.out, second.out].filter((out) => out.includes('ferretdb: built'))).toHaveLength(1);
    const { stdout } = await execFileAsync(join(checkout, '.cache', 'bin', 'ferretdb'), ['--version']);
    expect(stdout).toContain('stand-in');
    const leftovers = (await readdir(join(checkout, '.cache', 'bin'))).filter((name) => name.includes('.tmp'));
    expect(leftovers).toEqual([]);
  }, 300_000);
});
