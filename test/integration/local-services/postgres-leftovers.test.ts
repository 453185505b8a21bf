/**
 * A postmaster killed with SIGKILL leaves its children running: each is in a session of its own
 * (PostgreSQL's children call setsid()), so signalling the postmaster's process group misses them.
 * Most notice the postmaster's death and exit; one that does not (pg_cron's launcher was seen
 * to, here held with SIGSTOP so it happens every time) keeps the cluster's shared memory attached,
 * and every later start failed with "pre-existing shared memory block ... is still in use" until
 * someone killed it by hand. The cluster must kill what is left of its own instance, and nothing
 * of another cluster beside it, whether the process that started the dead instance is still
 * there (it sees the postmaster exit) or not (a supervisor that died with it).
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { startPostgres, type PostgresHandle, type PostgresOptions } from '../../../src/local-services/postgres.js';
import { isProcessAlive, spawnManaged, type ManagedProcess } from '../../../src/local-services/processes.js';
import { commandAs, runAsServiceUser } from '../../../src/local-services/service-user.js';
import { uniqueName } from '../../support/app.js';
import { postmasterPid, processState, waitForChild } from '../../support/postgres-processes.js';
import { testServices } from '../../support/services.js';

const execFileAsync = promisify(execFile);
const PG_BIN = '/usr/lib/postgresql/15/bin';

/** Stops or resumes processes at the end of a test, whatever happened in it. */
const cleanups: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await Promise.resolve(cleanup()).catch(() => undefined);
});

function clusterOptions(): PostgresOptions {
  return { dir: join(testServices().stateDir, uniqueName('pg-leftovers-')), role: 'engine' };
}

async function start(options: PostgresOptions): Promise<PostgresHandle> {
  const handle = await startPostgres(options);
  cleanups.push(() => handle.stop());
  return handle;
}

/** Stops the process (SIGSTOP) now, and sends SIGCONT to it at the end of the test if it is still there. */
function stopProcess(pid: number): void {
  process.kill(pid, 'SIGSTOP');
  cleanups.push(() => {
    if (isProcessAlive(pid)) process.kill(pid, 'SIGCONT');
  });
}

/** A query with the front end's role, as FerretDB connects: on the socket, as the cluster's OS user. */
async function selectOne(handle: PostgresHandle): Promise<string> {
  const [command, args] = commandAs(handle.runAs, join(PG_BIN, 'psql'), ['-X', '-A', '-t', '-c', 'SELECT 1', handle.url]);
  const { stdout } = await execFileAsync(command, args, { timeout: 20_000, env: { ...process.env, ...handle.runAs.env } });
  return stdout.trim();
}

describe('a PostgreSQL cluster after its postmaster was killed', () => {
  it('starts again although a child of the killed postmaster is still alive, and leaves the cluster beside it alone', async () => {
    const options = clusterOptions();
    const first = await start(options);
    const neighbour = await start(clusterOptions());
    const launcher = await waitForChild(first.pid, /pg_cron launcher/);
    // The neighbour's launcher is stopped too: a process that looks just like the leftover, but of
    // another data directory.
    const neighbourLauncher = await waitForChild(neighbour.pid, /pg_cron launcher/);
    stopProcess(launcher.pid);
    stopProcess(neighbourLauncher.pid);

    process.kill(first.pid, 'SIGKILL');
    await first.exited;
    await first.stop(); // what the supervisor does with a service that exited

    const second = await start({ ...options, startTimeoutMs: 30_000 });
    expect(await selectOne(second)).toBe('1');
    expect(isProcessAlive(launcher.pid), 'the stopped child of the killed postmaster').toBe(false);
    const log = await readFile(second.logFile, 'utf8');
    expect(log).toMatch(
      new RegExp(
        `after the postmaster exited \\(signal SIGKILL\\): killed \\d+ leftover process\\(es\\) of the cluster in \\S+: .*\\b${launcher.pid} \\(postgres: pg_cron launcher`,
      ),
    );

    expect(isProcessAlive(neighbour.pid), "the neighbour's postmaster").toBe(true);
    expect(processState(neighbourLauncher.pid), "the neighbour's stopped launcher").toBe('T');
    process.kill(neighbourLauncher.pid, 'SIGCONT');
    expect(await selectOne(neighbour)).toBe('1');
  });

  it('starts again when the process that ran the killed instance is gone too', async () => {
    const options = clusterOptions();
    const dataDir = join(options.dir, 'data');
    // A first start creates and configures the cluster; then it runs under an owner of its own
    // (as under a supervisor that is killed later), which this process does not know about.
    const configured = await startPostgres(options);
    await configured.stop();
    const runAs = await runAsServiceUser('postgres', 'postgresql-15');
    const [command, args] = commandAs(runAs, join(PG_BIN, 'postgres'), ['-D', dataDir]);
    const foreign: ManagedProcess = await spawnManaged(command, args, {
      logFile: join(options.dir, 'foreign-instance.log'),
      cwd: options.dir,
      env: { ...process.env, ...runAs.env },
    });
    cleanups.push(async () => void (await foreign.terminate(5_000)));
    const launcher = await waitForChild(foreign.pid, /pg_cron launcher/);
    expect(await postmasterPid(dataDir)).toBe(foreign.pid);
    stopProcess(launcher.pid);
    process.kill(foreign.pid, 'SIGKILL');
    await foreign.exited;

    const restarted = await start({ ...options, startTimeoutMs: 30_000 });
    expect(await selectOne(restarted)).toBe('1');
    expect(isProcessAlive(launcher.pid)).toBe(false);
    const log = await readFile(restarted.logFile, 'utf8');
    expect(log).toMatch(
      new RegExp(
        `before start: killed \\d+ leftover process\\(es\\) of the cluster in \\S+: .*\\b${launcher.pid} \\(postgres: pg_cron launcher`,
      ),
    );
  });
});
