/**
 * --cert-renewal cron: the installer writes a daily cron entry and the script it runs; the
 * script logs a cert-status run and rotates nothing while the certificates are far from expiry.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareInstall, runTool, type TestInstall } from './support.js';

const execFileAsync = promisify(execFile);
let target: TestInstall;
let cronDir: string;

beforeAll(async () => {
  target = await prepareInstall('renewal');
  cronDir = await mkdtemp(join(tmpdir(), 'cybercom-cron-'));
});

afterAll(async () => {
  await rm(cronDir, { recursive: true, force: true });
  await target?.cleanup();
});

describe('certificate renewal schedule', () => {
  it('installs a daily cron job that checks and, when due, rotates', async () => {
    const result = await runTool('installer', ['--yes', '--no-start', '--runtime', 'local', '--cert-renewal', 'cron', ...target.args()], {
      CYBERCOM_CRON_DIR: cronDir,
    });
    expect(result.code, result.output).toBe(0);
    const [entry] = await readdir(cronDir);
    expect(entry).toMatch(/^cybercom-cert-renewal-[0-9a-f]{8}$/);
    const script = join(target.dir, 'config', 'renew-certificates.sh');
    expect(await readFile(join(cronDir, entry as string), 'utf8')).toMatch(new RegExp(`^17 3 \\* \\* \\* root ${script}$`, 'm'));
    expect((await stat(script)).mode & 0o777).toBe(0o700);
    const text = await readFile(script, 'utf8');
    expect(text).toContain('ops/cert-status');
    expect(text).toContain('--days 30');
    // A renewal keeps the client CA: remote workers are not cut off at 3 a.m.
    expect(text).toMatch(/ops\/rotate-certs' --dir '[^']+' --keep-client-ca/);

    await execFileAsync(script, [], { env: { PATH: process.env.PATH } });
    const log = await readFile(join(target.dir, 'logs', 'cert-renewal.log'), 'utf8');
    expect(log).toContain('certificate check');
    expect(log).toContain('All 6 certificates valid for more than 30 days.');
    expect(log).not.toContain('Issued new');

    const removed = await runTool('installer', ['--yes', '--no-start', '--cert-renewal', 'none', ...target.args()], {
      CYBERCOM_CRON_DIR: cronDir,
    });
    expect(removed.output).toMatch(/Certificate renewal schedule: removed/);
    expect(await readdir(cronDir)).toEqual([]);
  });
});
