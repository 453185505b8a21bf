/**
 * ops/backup: every application database (service, catalog, data store) plus the configuration
 * (install.json, secrets.env, generated files) and the certificates, in one .tar.gz with a
 * manifest and SHA256SUMS. The archive holds every secret of the installation: mode 0600.
 */
import { chmod, cp, mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { create as createTar } from 'tar';
import { checksumLines } from '../../installation/checksums.js';
import { dumpDatabases } from '../../installation/database-archive.js';
import { SERVICE_DATABASE } from '../../installation/env-files.js';
import { hostMongoClient } from '../../installation/host-connections.js';
import { hasPrivateStore, hostPrivateMongoClient, inPrivateStore } from '../../installation/private-store.js';
import { DIR_HELP, EXIT, loadInstallation, parseCommandArgs, type Command } from './common.js';

export const BACKUP_FORMAT = 'cybercom-backup';
export const BACKUP_VERSION = 1;

export const BACKUP_HELP = `Usage: ops/backup [--dir DIR] [--output FILE]

Writes one archive with every application database (the service database with users, tokens,
task history and results; the catalog; the data store), the configuration with its secrets, and
the certificates. Restore it with ops/restore, also onto a fresh installation.
Messages waiting in RabbitMQ queues are not part of a backup.

${DIR_HELP}
  --output FILE        archive path (default backups/cybercom-backup-<time>.tar.gz)
Exit codes: 0 written, 1 failed, 2 usage error, 3 no installation.
`;

export interface BackupManifest {
  format: typeof BACKUP_FORMAT;
  version: number;
  createdAt: string;
  source: string;
  runtime: string;
  databases: Record<string, Record<string, number>>;
}

export const backup: Command = async (argv) => {
  const { values } = parseCommandArgs(argv, { output: { type: 'string' } });
  if (values.help) {
    process.stdout.write(BACKUP_HELP);
    return EXIT.ok;
  }
  const inst = await loadInstallation(values.dir);
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const output = resolve(values.output ?? join(inst.layout.backupsDir, `cybercom-backup-${stamp}.tar.gz`));
  await mkdir(inst.layout.backupsDir, { recursive: true, mode: 0o700 });
  const staging = await mkdtemp(join(inst.layout.backupsDir, '.staging-'));
  const root = join(staging, 'cybercom-backup');
  try {
    await mkdir(root, { mode: 0o700 });
    const report = (db: string, col: string, n: number): void => void process.stdout.write(`  ${db}.${col}: ${n} document(s)\n`);
    // One archive layout whatever the engines: the private store's collections go into the
    // service database's directory beside the task results (restore splits them again).
    const privateStore = hasPrivateStore(inst.config);
    const isPrivate = inPrivateStore(SERVICE_DATABASE);
    const client = hostMongoClient(inst.layout, inst.config, inst.secrets, { who: 'admin', timeoutMs: 15_000 });
    let databases;
    try {
      await client.connect();
      databases = await dumpDatabases(client, join(root, 'databases'), report, (db, col) => !(privateStore && isPrivate(db, col)));
    } finally {
      await client.close();
    }
    if (privateStore) {
      const store = hostPrivateMongoClient(inst.layout, inst.secrets, 15_000);
      try {
        const own = await dumpDatabases(store, join(root, 'databases'), report, isPrivate);
        for (const [db, cols] of Object.entries(own)) databases[db] = { ...databases[db], ...cols };
      } finally {
        await store.close();
      }
    }
    await cp(inst.layout.configDir, join(root, 'config'), { recursive: true });
    await cp(inst.layout.certsDir, join(root, 'certs'), { recursive: true });
    const manifest: BackupManifest = {
      format: BACKUP_FORMAT,
      version: BACKUP_VERSION,
      createdAt: new Date().toISOString(),
      source: inst.layout.root,
      runtime: inst.config.runtime,
      databases,
    };
    await writeFile(join(root, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o600 });
    await writeFile(join(root, 'SHA256SUMS'), await checksumLines(root), { mode: 0o600 });
    const partial = `${output}.partial`;
    await createTar({ gzip: true, file: partial, cwd: staging, portable: true }, ['cybercom-backup']);
    await chmod(partial, 0o600);
    await rename(partial, output);
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
  process.stdout.write(`Wrote ${output} (mode 0600: it holds every secret of the installation).\n`);
  return EXIT.ok;
};
