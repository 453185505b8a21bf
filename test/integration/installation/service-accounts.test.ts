/**
 * The local runtime's OS users for the API and the worker, on this host's real users and files:
 * each gets its own env file and client key and nothing else of config/ and certs/, and the API
 * keeps the one capability it needs to bind a privileged port. (That the worker's tasks then
 * reach none of the API's or the engines' secrets is checked on a whole installation, in the
 * installer's tests.)
 */
import { execFile } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InstallConfig } from '../../../src/installation/install-config.js';
import { installLayout, type InstallLayout } from '../../../src/installation/layout.js';
import { prepareServiceAccounts, SERVICE_USERS, type ServiceAccounts } from '../../../src/installation/service-accounts.js';
import { commandAs } from '../../../src/local-services/service-user.js';
import { keyMaterialPaths } from '../../../src/pki/files.js';
import { composeInstallConfig } from '../../support/install-fixtures.js';

const execFileAsync = promisify(execFile);

const config: InstallConfig = composeInstallConfig({ runtime: 'local', dbEngine: 'ferretdb' });

let parent: string;
let layout: InstallLayout;
let accounts: ServiceAccounts;

/** Runs `node -e script` as the account's user; its output, or its error output when it fails. */
async function runAs(account: keyof ServiceAccounts, script: string): Promise<string> {
  const [command, args] = commandAs(accounts[account].runAs, process.execPath, ['-e', script]);
  return execFileAsync(command, args, { timeout: 20_000 }).then(
    ({ stdout }) => stdout.trim(),
    (err: { stderr?: string }) => `failed: ${err.stderr ?? ''}`,
  );
}

/** A privileged port nothing listens on. */
async function freePrivilegedPort(): Promise<number> {
  for (let port = 1023; port > 900; port -= 1) {
    const free = await new Promise<boolean>((resolve) => {
      const server = createServer();
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
    });
    if (free) return port;
  }
  throw new Error('no free port below 1024');
}

beforeAll(async () => {
  parent = await mkdtemp(join(tmpdir(), 'cybercom-it-accounts-'));
  await chmod(parent, 0o755);
  layout = installLayout(join(parent, 'install'));
  await mkdir(layout.configDir, { recursive: true, mode: 0o700 });
  await mkdir(layout.certsDir, { recursive: true, mode: 0o700 });
  for (const file of [layout.secretsFile, layout.installConfigFile, layout.serviceEnvFile, layout.workerEnvFile]) {
    await writeFile(file, `${file}\n`, { mode: 0o600 });
  }
  for (const name of ['ca', 'mongodb', 'api', 'worker']) {
    for (const file of Object.values(keyMaterialPaths(layout.certsDir, name))) await writeFile(file, `${name}\n`, { mode: 0o600 });
  }
  await chmod(layout.root, 0o755);
  accounts = await prepareServiceAccounts(layout, { ...config, ports: { ...config.ports, http: await freePrivilegedPort() } });
});

afterAll(async () => {
  if (parent) await rm(parent, { recursive: true, force: true });
});

describe('the API and worker accounts of the local runtime', () => {
  it('run as users of their own', async () => {
    expect(await runAs('api', 'console.log(require("node:os").userInfo().username)')).toBe(SERVICE_USERS.api);
    expect(await runAs('worker', 'console.log(require("node:os").userInfo().username)')).toBe(SERVICE_USERS.worker);
  });

  it('give each service its own env file and client key, and nothing else of config/ and certs/', async () => {
    const read = (file: string): string => `require("node:fs").readFile(${JSON.stringify(file)}, (e) => console.log(e ? e.code : "read"))`;
    const api = keyMaterialPaths(layout.certsDir, 'api');
    const worker = keyMaterialPaths(layout.certsDir, 'worker');
    const ca = keyMaterialPaths(layout.certsDir, 'ca');
    const mongodb = keyMaterialPaths(layout.certsDir, 'mongodb');
    const expected: Record<string, [api: string, worker: string]> = {
      [layout.serviceEnvFile]: ['read', 'EACCES'],
      [layout.workerEnvFile]: ['EACCES', 'read'],
      [api.keyFile]: ['read', 'EACCES'],
      [api.combinedFile]: ['read', 'EACCES'],
      [worker.keyFile]: ['EACCES', 'read'],
      [worker.combinedFile]: ['EACCES', 'read'],
      [ca.certFile]: ['read', 'read'],
      [ca.keyFile]: ['EACCES', 'EACCES'],
      [mongodb.keyFile]: ['EACCES', 'EACCES'],
      [layout.secretsFile]: ['EACCES', 'EACCES'],
      [layout.installConfigFile]: ['EACCES', 'EACCES'],
    };
    for (const [file, [byApi, byWorker]] of Object.entries(expected)) {
      expect(await runAs('api', read(file)), `API reads ${file}`).toBe(byApi);
      expect(await runAs('worker', read(file)), `worker reads ${file}`).toBe(byWorker);
    }
    const list = (dir: string): string => `require("node:fs").readdir(${JSON.stringify(dir)}, (e) => console.log(e ? e.code : "listed"))`;
    for (const dir of [layout.configDir, layout.certsDir]) {
      expect(await runAs('api', list(dir))).toBe('EACCES');
      expect(await runAs('worker', list(dir))).toBe('EACCES');
      expect((await stat(dir)).mode & 0o777).toBe(0o711);
    }
    // Granted afresh at every start: what the installer rewrites as root is handed over again.
    await writeFile(layout.serviceEnvFile, 'rewritten\n', { mode: 0o600 });
    await execFileAsync('chown', ['root:root', layout.serviceEnvFile]);
    await prepareServiceAccounts(layout, config);
    expect(await runAs('api', read(layout.serviceEnvFile))).toBe('read');
    expect(await readFile(layout.serviceEnvFile, 'utf8')).toBe('rewritten\n');
  });

  it('let the API bind its privileged port, and the worker no such port', async () => {
    const port = await freePrivilegedPort();
    const listen = `require("node:net").createServer().listen(${port}, "127.0.0.1", function () { console.log("bound"); this.close(); }).on("error", (e) => console.log(e.code))`;
    expect(await runAs('api', listen)).toBe('bound');
    expect(await runAs('worker', listen)).toBe('EACCES');
  });
});
