/**
 * The local services' log files are readable by their owner only (0600): what the services print
 * (connection details, queries, records quoted in errors) is nobody else's to read. A file an
 * earlier version left at 0644 is narrowed when its service next starts.
 */
import { chmod, mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { spawnManaged } from '../../../src/local-services/processes.js';
import { narrowLogFiles } from '../../../src/local-services/service-logs.js';
import { uniqueName } from '../../support/app.js';
import { testServices } from '../../support/services.js';

const modeOf = async (file: string): Promise<number> => (await stat(file)).mode & 0o777;

/** Every `*.log` file under `dir`, at any depth. */
async function logFilesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((entry) => entry.isFile() && entry.name.endsWith('.log')).map((entry) => join(entry.parentPath, entry.name));
}

/** Runs `echo` as a managed service writing to `logFile`, and waits until it ended. */
async function runService(logFile: string, text: string): Promise<void> {
  const service = await spawnManaged('/bin/sh', ['-c', `echo ${text}`], { logFile });
  await service.exited;
}

describe('service log files', () => {
  it('are made 0600, and an existing 0644 one is narrowed on the next start, its lines kept', async () => {
    const dir = join(testServices().stateDir, uniqueName('logs-'));
    await mkdir(dir, { recursive: true });
    const fresh = join(dir, 'fresh.log');
    await runService(fresh, 'first');
    expect(await modeOf(fresh)).toBe(0o600);

    const old = join(dir, 'old.log');
    await writeFile(old, 'from an earlier version\n');
    await chmod(old, 0o644);
    await runService(old, 'after the upgrade');
    expect(await modeOf(old)).toBe(0o600);
    expect(await readFile(old, 'utf8')).toBe('from an earlier version\nafter the upgrade\n');
  });

  it("that a service writes itself (RabbitMQ's log/) are narrowed before it starts", async () => {
    const dir = join(testServices().stateDir, uniqueName('logs-'));
    await mkdir(dir, { recursive: true });
    for (const name of ['node_upgrade.log', 'erl_crash.dump']) {
      await writeFile(join(dir, name), 'x');
      await chmod(join(dir, name), 0o644);
    }
    await narrowLogFiles(dir);
    expect(await modeOf(join(dir, 'node_upgrade.log'))).toBe(0o600);
    expect(await modeOf(join(dir, 'erl_crash.dump'))).toBe(0o600);
    await expect(narrowLogFiles(join(dir, 'missing'))).resolves.toBeUndefined();
  });

  it("of the suite's own database engine and broker are readable by their owner only", async () => {
    const files = await logFilesUnder(testServices().stateDir);
    expect(files.map((file) => file.split('/').pop())).toEqual(expect.arrayContaining(['postgres.log', 'ferretdb.log', 'rabbitmq.log']));
    for (const file of files) expect((await modeOf(file)).toString(8), file).toBe('600');
  });
});
