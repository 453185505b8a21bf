import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

// `npm ci` (what a fresh clone, CI and the Dockerfiles run) refuses a lock file in which any
// dependency, optional ones included, has no entry. A working node_modules hides that locally,
// so the lock file is checked here by resolving every dependency the way npm does.

interface LockEntry {
  version?: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

interface LockFile {
  lockfileVersion: number;
  packages: Record<string, LockEntry>;
}

const lock = JSON.parse(readFileSync('package-lock.json', 'utf8')) as LockFile;
const manifest = JSON.parse(readFileSync('package.json', 'utf8')) as LockEntry;

/** The lock paths npm searches for `dep` when required from the package at `from`. */
function candidatePaths(from: string, dep: string): string[] {
  const paths: string[] = [];
  let dir = from;
  for (;;) {
    paths.push(dir === '' ? `node_modules/${dep}` : `${dir}/node_modules/${dep}`);
    if (dir === '') return paths;
    const cut = dir.lastIndexOf('/node_modules/');
    dir = cut === -1 ? '' : dir.slice(0, cut);
  }
}

function unresolved(): string[] {
  const missing: string[] = [];
  for (const [path, entry] of Object.entries(lock.packages)) {
    const deps = {
      ...entry.dependencies,
      ...entry.optionalDependencies,
      ...(path === '' ? entry.devDependencies : {}),
    };
    for (const dep of Object.keys(deps)) {
      if (!candidatePaths(path, dep).some((candidate) => candidate in lock.packages)) {
        missing.push(`${path || '(root)'} → ${dep}`);
      }
    }
  }
  return missing;
}

describe('package-lock.json', () => {
  it('is a lockfile v3 whose root matches package.json', () => {
    expect(lock.lockfileVersion).toBe(3);
    const root = lock.packages[''];
    expect(root?.dependencies).toEqual(manifest.dependencies);
    expect(root?.devDependencies).toEqual(manifest.devDependencies);
  });

  it('has an entry for every dependency, optional platform packages included', () => {
    expect(unresolved()).toEqual([]);
  });

  it('resolves lookups through nested node_modules folders', () => {
    expect(candidatePaths('node_modules/a/node_modules/b', 'c')).toEqual([
      'node_modules/a/node_modules/b/node_modules/c',
      'node_modules/a/node_modules/c',
      'node_modules/c',
    ]);
  });
});
