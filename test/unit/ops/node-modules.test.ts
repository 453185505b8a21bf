/**
 * ops/lib/node-modules.sh: node_modules is installed again when the lock file it was installed
 * from is not the checkout's (a pulled dependency), and left alone when it is. npm is replaced by
 * a stand-in that records its calls, so no package is fetched.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

const library = resolve('ops/lib/node-modules.sh');
const roots: string[] = [];

afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

/** A checkout with a lock file, and an `npm` that logs its arguments and makes node_modules. */
function checkout(): { root: string; npmCalls: () => string[] } {
  const root = mkdtempSync(join(tmpdir(), 'node-modules-'));
  roots.push(root);
  const bin = join(root, 'bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'npm'), `#!/usr/bin/env bash\necho "$*" >> "${root}/npm.log"\nmkdir -p node_modules\n`);
  chmodSync(join(bin, 'npm'), 0o755);
  writeFileSync(join(root, 'package-lock.json'), '{"lockfileVersion":3,"packages":{"node_modules/a":{"version":"1.0.0"}}}\n');
  const npmCalls = (): string[] => {
    try {
      return readFileSync(join(root, 'npm.log'), 'utf8').trim().split('\n');
    } catch {
      return [];
    }
  };
  return { root, npmCalls };
}

function ensure(root: string): void {
  execFileSync('bash', ['-c', `source "${library}"; node_modules_current "$1" || install_node_modules "$1"`, 'ensure', root], {
    env: { ...process.env, PATH: `${join(root, 'bin')}:${process.env.PATH ?? ''}` },
  });
}

describe('node_modules and the lock file', () => {
  it('installs a missing tree with npm ci, and then leaves it alone', () => {
    const { root, npmCalls } = checkout();
    ensure(root);
    expect(npmCalls()).toEqual(['ci --no-audit --no-fund']);
    ensure(root);
    expect(npmCalls()).toHaveLength(1);
  });

  it('installs again when the lock file changed since, or when the tree says nothing of its lock file', () => {
    const { root, npmCalls } = checkout();
    ensure(root);
    writeFileSync(join(root, 'package-lock.json'), '{"lockfileVersion":3,"packages":{"node_modules/b":{"version":"2.0.0"}}}\n');
    ensure(root);
    expect(npmCalls()).toHaveLength(2);
    // A tree kept from before the lock file was recorded (a cache, an older installation).
    rmSync(join(root, 'node_modules', '.installed-from-package-lock.json'));
    ensure(root);
    expect(npmCalls()).toHaveLength(3);
    ensure(root);
    expect(npmCalls()).toHaveLength(3);
  });
});
