/**
 * The compose runtime ships the Python client: the installer's client-wheel step builds the wheel
 * on the host into the install directory's compose/client (the folder compose.yaml mounts
 * read-only into the API containers), and an API reading CLIENT_DOWNLOADS_DIR from there, as the
 * containers do, serves it at /api/client/python/. The container suite checks the same URL on
 * the running stack.
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
import { startTestApp, type TestApp } from '../../support/app.js';
import { REPO } from './support.js';

let dir: string;
let layout: InstallLayout;
let app: TestApp | undefined;

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
  await app?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('the client-wheel step on a compose installation', () => {
  it('builds the wheel into the folder compose.yaml mounts into the API containers', async () => {
    const outcome = await clientWheel.run(installContext());
    expect(outcome).toMatch(/^(built|present): cybercom-.*\.whl$/);
    const wheels = (await readdir(join(layout.composeClientDir, 'python'))).filter((f) => f.endsWith('.whl'));
    expect(wheels).toHaveLength(1);

    // compose.yaml mounts exactly that folder, read-only, where CLIENT_DOWNLOADS_DIR points.
    const compose = parse(readFileSync(join(REPO, 'compose.yaml'), 'utf8'), { merge: true }) as {
      services: { api: { volumes: string[]; environment: Record<string, string> } };
    };
    const target = compose.services.api.environment.CLIENT_DOWNLOADS_DIR;
    const mount = compose.services.api.volumes.find((v) => v.endsWith(`:${target}:ro`));
    expect(mount).toBe(`\${CYBERCOM_DIR:?run ./installer first}/compose/client:${target}:ro`);
    expect(join(layout.root, 'compose', 'client')).toBe(layout.composeClientDir);
  });

  it('is what an API with that CLIENT_DOWNLOADS_DIR serves to pip', async () => {
    app = await startTestApp({ CLIENT_DOWNLOADS_DIR: layout.composeClientDir });
    const index = await fetch(`${app.url}/api/client/python/`, { headers: { accept: 'application/json' } });
    expect(index.status).toBe(200);
    const about = (await index.json()) as { wheel: string };
    const [wheel] = (await readdir(join(layout.composeClientDir, 'python'))).filter((f) => f.endsWith('.whl'));
    expect(about.wheel).toBe(`${app.url}/api/client/python/${wheel}`);
    const download = await fetch(about.wheel);
    expect(download.status).toBe(200);
    const bytes = Buffer.from(await download.arrayBuffer());
    expect(bytes.subarray(0, 2).toString('latin1')).toBe('PK'); // a wheel is a zip archive
  });
});
