/**
 * The Python client's partial-failure reports while the database engine restarts: runs the
 * pytest module marked `engine_restart` (clients/python) against an API on a private engine
 * (FerretDB + PostgreSQL + DocumentDB) of this test's own, which the Python tests have killed
 * in the middle of an insert and start again through a loopback control endpoint
 * (engine-control.ts), so the suite's shared engine and every other test stay undisturbed.
 * Prepared by test/support/python-client.sh (.venv-client), like python-client.test.ts.
 */
import { execFile } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, uniqueName, type TestApp } from '../../support/app.js';
import { serveEngineControl, type EngineControl } from '../../support/engine-control.js';
import { startPrivateMongo, type PrivateMongo } from '../../support/private-mongo.js';
import { testServices } from '../../support/services.js';
import { runClientPytest } from '../../support/client-pytest.js';
import { repoRoot } from '../worker/support.js';

const run = promisify(execFile);
const SUPERUSER = 'pyrestart';

let dir: string;
let db: PrivateMongo;
let app: TestApp;
let control: EngineControl;

beforeAll(async () => {
  await run('bash', [join(repoRoot, 'test/support/python-client.sh')], { cwd: repoRoot, timeout: 600_000 });
  const services = testServices();
  dir = join(services.stateDir, uniqueName('pyrestart-'));
  db = await startPrivateMongo({
    dir,
    certDir: services.certDir,
    username: 'pyrestart',
    password: `pw-${uniqueName('')}-${uniqueName('')}`,
  });
  const env = db.env();
  // Command monitoring lets the control endpoint kill the engine as an insert command leaves.
  app = await startTestApp({ ...env, MONGO_URI: `${env.MONGO_URI}?monitorCommands=true` });
  await app.users.createUser({ username: SUPERUSER, password: 'py-restart-password-1', isSuperuser: true });
  control = await serveEngineControl(db, app.ctx.mongo);
}, 300_000);

afterAll(async () => {
  await control?.close();
  await app?.close();
  await db?.stop();
  if (dir !== undefined && process.env.TEST_KEEP_STATE !== '1') await rm(dir, { recursive: true, force: true });
});

describe('Python client during a database restart', () => {
  it('reports exactly which records an interrupted insert wrote, and the remainder completes the set', async () => {
    const env = {
      ...process.env,
      CYBERCOM_URL: app.url,
      CYBERCOM_TOKEN: await app.users.tokenFor(SUPERUSER),
      CYBERCOM_TEST_PREFIX: app.prefix,
      CYBERCOM_TEST_ENGINE_CONTROL: control.url,
      CYBERCOM_CONFIG: join(repoRoot, '.cache/client/unused-config.json'),
    };
    const pytest = await runClientPytest(['tests/integration/test_insert_restart.py', '-m', 'engine_restart', '-s'], env);
    const { summary } = pytest;
    console.log(`pytest -m engine_restart (clients/python):\n${summary}\nengine: ${control.log.join(', ')}`);
    expect(pytest.code, `${pytest.output}\nengine: ${control.log.join(', ')}`).toBe(0);
    expect(summary).toMatch(/\d+ passed/);
    expect([...pytest.output.matchAll(/^SKIPPED \[\d+\] (.*)$/gm)].map((m) => m[1])).toEqual([]);
    // The engine really went down and came back during the run.
    expect(control.log.filter((line) => line.startsWith('kill')).length).toBeGreaterThan(0);
    expect(control.log.filter((line) => line.startsWith('restart')).length).toBeGreaterThan(0);
  }, 900_000);
});
