/**
 * ops/backup and ops/restore round trip onto a fresh installation: the data store, the catalog
 * and the service database (users, task results) come back, and the fresh installation takes
 * over the backed-up identity (administrator password, CA) while keeping its own ports.
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { readFile, writeFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_PASSWORD, adminLogin, call, install, prepareInstall, runTool, type TestInstall } from '../installer/support.js';

let source: TestInstall;
let fresh: TestInstall;
let archive: string;
let taskId: string;

/** The source installation, with records, a finished task and its history to back up. */
async function installSource(): Promise<void> {
  await install(source);
  const token = await adminLogin(source.api);
  await call(source.api, '/api/data_store/data/', { method: 'POST', bearer: token, body: { database: 'field' } });
  await call(source.api, '/api/data_store/data/field/', { method: 'POST', bearer: token, body: { collection: 'samples' } });
  const inserted = await call(source.api, '/api/data_store/data/field/samples/', {
    method: 'POST',
    bearer: token,
    body: [
      { site: 'A', taken: { $date: '2024-05-01T10:00:00Z' }, depth: 1.5 },
      { site: 'B', depth: 2 },
    ],
  });
  expect(inserted.status, inserted.text).toBe(201);
  const task = await call(source.api, '/api/queue/run/tasks.add/?wait=30', {
    method: 'POST',
    bearer: token,
    body: { function: 'tasks.add', queue: 'celery', args: [1, 2], kwargs: {}, tags: ['before-backup'] },
  });
  expect(task.status, task.text).toBe(200);
  taskId = task.json.task_id as string;
}

/** The fresh installation the backup is restored onto: its own ports, directory and password. */
async function installFresh(): Promise<void> {
  // A different administrator password on the fresh installation: the restore must bring back the old one.
  const other = join(fresh.passwordFile, '..', 'other-password');
  await writeFile(other, 'Another-Password-77\n', { mode: 0o600 });
  const freshArgs = fresh.args().map((a) => (a === fresh.passwordFile ? other : a));
  const result = await runTool('installer', ['--yes', ...freshArgs]);
  expect(result.code, result.output).toBe(0);
}

beforeAll(async () => {
  source = await prepareInstall('backup-src');
  fresh = await prepareInstall('backup-dst');
  // Two independent installations (own directories, ports and processes): installed side by side,
  // as most of an install is waiting for services to come up. allSettled: both are left whole
  // (and stopped by afterAll) even when one of them fails.
  const installed = await Promise.allSettled([installSource(), installFresh()]);
  for (const outcome of installed) if (outcome.status === 'rejected') throw outcome.reason;
}, 420_000);

afterAll(async () => {
  await source?.cleanup();
  await fresh?.cleanup();
}, 180_000);

describe('backup and restore', () => {
  it('ops/backup writes one private archive', async () => {
    archive = join(source.dir, 'backups', 'test.tar.gz');
    const result = await runTool('ops/backup', ['--dir', source.dir, '--output', archive]);
    expect(result.code, result.output).toBe(0);
    expect(result.stdout).toContain('field.samples: 2 document(s)');
    expect(result.stdout).toMatch(/cybercom\.auth_user: 1 document/);
    expect((await stat(archive)).mode & 0o777).toBe(0o600);
  });

  it('ops/restore needs --yes', async () => {
    const result = await runTool('ops/restore', [archive, '--dir', fresh.dir]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--yes');
  });

  it('restores onto the fresh installation: data, users, task history and identity', async () => {
    const result = await runTool('ops/restore', [archive, '--yes', '--dir', fresh.dir], {}, 400_000);
    expect(result.code, result.output).toBe(0);
    expect(result.stdout).toContain('Restored; all services healthy.');
    // The backed-up administrator password works on the restored installation.
    const token = await adminLogin(fresh.api, ADMIN_PASSWORD);
    const samples = await call(fresh.api, '/api/data_store/data/field/samples/?query={"sort":{"site":1},"projection":{"_id":0}}', {
      bearer: token,
    });
    expect(samples.status, samples.text).toBe(200);
    expect(samples.json.results).toEqual([
      { site: 'A', taken: '2024-05-01T10:00:00.000Z', depth: 1.5 },
      { site: 'B', depth: 2 },
    ]);
    const run = await call(fresh.api, `/api/queue/task/${taskId}/`, { bearer: token });
    expect(run.status, run.text).toBe(200);
    expect(JSON.stringify(run.json)).toContain('SUCCESS');
    expect(await readFile(join(fresh.dir, 'certs', 'ca.pem'), 'utf8')).toBe(await readFile(join(source.dir, 'certs', 'ca.pem'), 'utf8'));
    // Its own settings are kept: it still answers on its own ports, and is healthy.
    expect((await runTool('ops/status', ['--dir', fresh.dir])).code).toBe(0);
    // A task runs after the restore (broker users restored from the backed-up secrets).
    const task = await call(fresh.api, '/api/queue/run/tasks.add/?wait=30', {
      method: 'POST',
      bearer: token,
      body: { function: 'tasks.add', queue: 'celery', args: [2, 3], kwargs: {}, tags: [] },
    });
    expect(task.json).toMatchObject({ status: 'SUCCESS', result: 5 });
  }, 420_000); // the restore alone may take the 400 s its command is given: it restarts the stack twice
});
