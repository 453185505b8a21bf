/**
 * ops/restore ARCHIVE: puts a backup back, also onto a fresh installation. By default the
 * installation takes over the backup's identity: its secrets (passwords, SECRET_KEY) and
 * certificates (CA included, so existing worker bundles keep working), then every database. The
 * target keeps its own settings (install.json: runtime, ports, host name); derived files are
 * rendered anew for it. The database and broker data are replaced (the old data directory is
 * moved aside in the local runtime; compose volumes are removed), then the services start with
 * the restored credentials and the documents are loaded. With --data-only only the databases are
 * replaced and secrets and certificates stay as they are.
 */
import { cp, mkdir, mkdtemp, readFile, rename, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { extract } from 'tar';
import { writeComposeServiceFiles } from '../../installation/compose-files.js';
import { ensureCertificates } from '../../installation/certificates.js';
import { verifyChecksums } from '../../installation/checksums.js';
import { loadDatabases } from '../../installation/database-archive.js';
import { writeDerivedConfig } from '../../installation/derived-config.js';
import { waitUntilHealthy, type Installation } from '../../installation/health.js';
import { SERVICE_DATABASE } from '../../installation/env-files.js';
import { hostMongoClient } from '../../installation/host-connections.js';
import { hasPrivateStore, hostPrivateMongoClient, inPrivateStore } from '../../installation/private-store.js';
import { topologyOf } from '../../installation/install-config.js';
import { loadSecrets } from '../../installation/secrets.js';
import { openRuntime } from '../../installation/runner/open-runtime.js';
import { BACKUP_FORMAT, BACKUP_VERSION, type BackupManifest } from './backup.js';
import { CommandError, DIR_HELP, EXIT, loadInstallation, parseCommandArgs, type Command } from './common.js';

export const RESTORE_HELP = `Usage: ops/restore ARCHIVE --yes [--dir DIR] [--data-only]

Restores a backup made by ops/backup into the installation (which may be a fresh one made by
./installer). Replaces every database in the archive, and by default also the secrets and
certificates (the installation then has the backed-up identity: passwords, CA, worker
credentials). The installation's own settings (runtime, ports, host name) are kept.
Current data is replaced: --yes confirms that.

${DIR_HELP}
  --data-only          restore the databases only; keep this installation's secrets and certificates
  --yes                confirm replacing the current data
Exit codes: 0 restored, 1 failed, 2 usage error (or no --yes), 3 no installation.
`;

function say(line: string): void {
  process.stdout.write(`${line}\n`);
}

async function unpack(archive: string, into: string): Promise<{ dir: string; manifest: BackupManifest }> {
  await extract({ file: archive, cwd: into });
  const dir = join(into, 'cybercom-backup');
  const manifest = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8').catch(() => '{}')) as BackupManifest;
  if (manifest.format !== BACKUP_FORMAT) throw new CommandError(`${archive} is not a cybercom backup`);
  if (manifest.version > BACKUP_VERSION)
    throw new CommandError(`${archive} is a newer backup format (${manifest.version}) than this version reads`);
  const bad = await verifyChecksums(dir);
  if (bad.length > 0) throw new CommandError(`${archive} is damaged: checksums differ for ${bad.slice(0, 5).join(', ')}`);
  return { dir, manifest };
}

/** Takes over the backup's secrets and certificates; the old ones are kept in a side directory. */
async function restoreIdentity(inst: Installation, from: string, aside: string): Promise<Installation> {
  const { layout, config } = inst;
  await mkdir(aside, { recursive: true, mode: 0o700 });
  await cp(layout.certsDir, join(aside, 'certs'), { recursive: true });
  await cp(layout.configDir, join(aside, 'config'), { recursive: true });
  await cp(join(from, 'config', 'secrets.env'), layout.secretsFile);
  await rm(layout.certsDir, { recursive: true, force: true });
  await cp(join(from, 'certs'), layout.certsDir, { recursive: true });
  const secrets = await loadSecrets(layout.secretsFile);
  // The restored server certificates may lack this installation's host name: re-issued from the restored CA if so.
  await ensureCertificates(layout.certsDir, {
    publicHost: config.publicHost,
    validityDays: config.certValidityDays,
    topology: topologyOf(config),
  });
  await writeDerivedConfig(layout, config, secrets, process.env);
  return { ...inst, secrets };
}

export const restore: Command = async (argv) => {
  const { values, positionals } = parseCommandArgs(
    argv,
    { 'data-only': { type: 'boolean', default: false }, yes: { type: 'boolean', default: false } },
    true,
  );
  if (values.help) {
    process.stdout.write(RESTORE_HELP);
    return EXIT.ok;
  }
  if (positionals.length !== 1) throw new CommandError('name one archive to restore', EXIT.usage);
  const archive = resolve(positionals[0] as string);
  if (!existsSync(archive)) throw new CommandError(`${archive} does not exist`, EXIT.usage);
  if (!values.yes) throw new CommandError('restoring replaces the current data: confirm with --yes', EXIT.usage);
  let inst = await loadInstallation(values.dir);
  const { layout } = inst;
  await mkdir(layout.backupsDir, { recursive: true, mode: 0o700 });
  const staging = await mkdtemp(join(layout.backupsDir, '.restore-'));
  try {
    const { dir, manifest } = await unpack(archive, staging);
    say(`Backup of ${manifest.source} from ${manifest.createdAt}: ${Object.keys(manifest.databases).length} database(s)`);
    const runtime = await openRuntime(layout, inst.config);
    if (!values['data-only']) {
      const aside = join(layout.root, `pre-restore-${new Date().toISOString().replace(/[:.]/g, '-')}`);
      say('Stopping the services ...');
      await runtime.stop();
      inst = await restoreIdentity(inst, dir, aside);
      if (inst.config.runtime === 'local') {
        // Users and passwords live with the data: start from fresh data directories.
        if (existsSync(layout.dataDir)) await rename(layout.dataDir, join(aside, 'data'));
      } else {
        await runtime.removeData();
        await writeComposeServiceFiles(layout, inst.config, inst.secrets);
      }
      say(`Secrets and certificates restored (previous ones in ${aside}). Starting the services ...`);
      await (await openRuntime(layout, inst.config)).startOrRestart();
      if (inst.config.runtime === 'compose') {
        const { ensureDatabaseUsers } = await import('../../installation/database-users.js');
        const admin = hostMongoClient(layout, inst.config, inst.secrets, { who: 'admin', timeoutMs: 30_000 });
        await ensureDatabaseUsers(admin, inst.secrets).finally(() => admin.close());
      }
    }
    await waitUntilHealthy(inst, 180_000);
    say('Loading the databases ...');
    const warn = (text: string): void => say(`  warning: ${text}`);
    const report = (loaded: Record<string, Record<string, number>>): void => {
      for (const [db, cols] of Object.entries(loaded)) for (const [col, n] of Object.entries(cols)) say(`  ${db}.${col}: ${n} document(s)`);
    };
    // The service's own data goes to the private store where there is one (backups from before it
    // existed too), the rest to the main engine.
    const privateStore = hasPrivateStore(inst.config);
    const isPrivate = inPrivateStore(SERVICE_DATABASE);
    const client = hostMongoClient(layout, inst.config, inst.secrets, { who: 'admin', timeoutMs: 15_000 });
    try {
      await client.connect();
      report(await loadDatabases(client, join(dir, 'databases'), warn, (db, col) => !(privateStore && isPrivate(db, col))));
    } finally {
      await client.close();
    }
    if (privateStore) {
      const store = hostPrivateMongoClient(layout, inst.secrets, 15_000);
      try {
        report(await loadDatabases(store, join(dir, 'databases'), warn, isPrivate));
      } finally {
        await store.close();
      }
    }
    // The API caches nothing across restarts that the restore could contradict, but sessions and
    // the permission cache are per process: a restart makes the restored users take effect at once.
    await (await openRuntime(layout, inst.config)).startOrRestart();
    await waitUntilHealthy(inst, 180_000);
    say('Restored; all services healthy.');
    return EXIT.ok;
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
};
