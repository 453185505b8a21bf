/**
 * The compose runtime ships the Python client in its API image: docker/api.Dockerfile builds the
 * wheel in a Python stage and copies it where the image's CLIENT_DOWNLOADS_DIR points, so the
 * installer builds nothing on the host for it and compose.yaml mounts nothing over it. The
 * container suite downloads the wheel from the running stack through the proxy.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { installLayout, type InstallLayout } from '../../../src/installation/layout.js';
import { Progress } from '../../../src/installer/progress.js';
import type { InstallContext } from '../../../src/installer/step.js';
import { clientWheel } from '../../../src/installer/steps/client-wheel.js';
import { composeInstallConfig } from '../../support/install-fixtures.js';
import { REPO } from './support.js';

let dir: string;
let layout: InstallLayout;

function installContext(): InstallContext {
  return {
    layout,
    config: composeInstallConfig(),
    isUpgrade: false,
    previous: undefined,
    adminPassword: undefined,
    forceCerts: false,
    noStart: true,
    env: process.env,
    progress: new Progress({ write: () => true }),
    missingPrerequisites: [],
    ownRunningServices: false,
    summary: [],
  };
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cybercom-client-wheel-'));
  layout = installLayout(dir);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('the Python client on a compose installation', () => {
  it('is not built on the host by the installer', async () => {
    expect(await clientWheel.run(installContext())).toBe('carried by the API image');
    expect(await readdir(layout.root).catch(() => [])).toEqual([]);
  });

  it('is built into the API image, where its CLIENT_DOWNLOADS_DIR points, and nothing is mounted over it', () => {
    const dockerfile = readFileSync(join(REPO, 'docker', 'api.Dockerfile'), 'utf8');
    const downloads = /CLIENT_DOWNLOADS_DIR=(\S+)/.exec(dockerfile)?.[1];
    expect(downloads).toBeDefined();
    expect(dockerfile).toMatch(/FROM \$\{PYTHON_IMAGE\} AS client-wheel/);
    expect(dockerfile).toContain(`COPY --from=client-wheel /wheels ${downloads}/python`);
    const compose = parse(readFileSync(join(REPO, 'compose.yaml'), 'utf8'), { merge: true }) as {
      services: { api: { volumes: string[]; environment?: Record<string, string>; build: { args: Record<string, string> } } };
    };
    const api = compose.services.api;
    expect(api.environment?.CLIENT_DOWNLOADS_DIR).toBeUndefined();
    expect(api.volumes.filter((v) => v.includes(downloads as string))).toEqual([]);
    expect(api.build.args.PYTHON_IMAGE).toMatch(/^\$\{PYTHON_IMAGE:-python:3\.\d+-slim-bookworm\}$/);
  });
});
