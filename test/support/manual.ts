/**
 * The manual's site, built for /api/manual/ once and kept in .cache/manual (MANUAL_DIR's default)
 * by ops/build-manual.sh, which rebuilds only when the manual's sources changed: the first test
 * run after a docs change pays about 15 s, later ones nothing. Test files side by side that both
 * want it take turns (a lock file beside the directory): the second finds the first's build.
 */
import { execFile } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const MANUAL_TEST_DIR = join(repoRoot, '.cache', 'manual');

/** Builds the manual into MANUAL_TEST_DIR unless it is already current; returns that directory. */
export async function builtManual(): Promise<string> {
  await mkdir(dirname(MANUAL_TEST_DIR), { recursive: true });
  await promisify(execFile)('flock', [`${MANUAL_TEST_DIR}.lock`, 'bash', join(repoRoot, 'ops', 'build-manual.sh')], {
    env: { ...process.env, MANUAL_DIR: MANUAL_TEST_DIR },
    maxBuffer: 16 * 1024 * 1024,
  });
  return MANUAL_TEST_DIR;
}
