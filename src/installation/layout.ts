/**
 * Where an installation keeps its files. One directory (the "install directory", `--dir`) holds
 * everything that must survive upgrades and be backed up: configuration, secrets, certificates,
 * service data (local runtime), logs and worker bundles. Every operator command takes the same
 * `--dir` and finds its files through this one module.
 */
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface InstallLayout {
  root: string;
  /** 0700: install.json, secrets.env, generated env files, broker definitions. */
  configDir: string;
  installConfigFile: string;
  secretsFile: string;
  /** Cluster topology: the MongoDB replica set's shared keyFile (members authenticate each other with it). */
  mongoKeyFile: string;
  /** The API's settings (what `cybercom serve` reads), rendered for the chosen runtime. */
  serviceEnvFile: string;
  /** The local worker's settings. */
  workerEnvFile: string;
  /** Variables for `docker compose --env-file` (no secrets: image names, ports, paths). */
  composeEnvFile: string;
  /** RabbitMQ definitions (users with salted password hashes, vhost, permissions). */
  brokerDefinitionsFile: string;
  /** 0700: CA, server and client certificates with their keys (see ops/certificates). */
  certsDir: string;
  /** Local runtime: the broker's and the database's data directories. */
  dataDir: string;
  brokerDir: string;
  databaseDir: string;
  /** Local runtime on FerretDB: the service's own data, on an engine only the API reaches (see private-store.ts). */
  privateDatabaseDir: string;
  /** Compose runtime: per-service copies of keys and secrets, owned by the user each image runs as. */
  composeFilesDir: string;
  /**
   * Compose runtime: the Python client's wheel (in its python/ folder), built on this host by the
   * installer and mounted read-only into the API containers, which serve it at /api/client/python/.
   */
  composeClientDir: string;
  logsDir: string;
  installLog: string;
  /** Local runtime supervisor: pid file and status. */
  runDir: string;
  supervisorPidFile: string;
  supervisorStatusFile: string;
  supervisorLog: string;
  bundlesDir: string;
  backupsDir: string;
}

export function installLayout(root: string): InstallLayout {
  const dir = resolve(root);
  const configDir = join(dir, 'config');
  const dataDir = join(dir, 'data');
  const logsDir = join(dir, 'logs');
  const runDir = join(dir, 'run');
  return {
    root: dir,
    configDir,
    installConfigFile: join(configDir, 'install.json'),
    secretsFile: join(configDir, 'secrets.env'),
    mongoKeyFile: join(configDir, 'mongo-keyfile'),
    serviceEnvFile: join(configDir, 'service.env'),
    workerEnvFile: join(configDir, 'worker.env'),
    composeEnvFile: join(configDir, 'compose.env'),
    brokerDefinitionsFile: join(configDir, 'rabbitmq-definitions.json'),
    certsDir: join(dir, 'certs'),
    dataDir,
    brokerDir: join(dataDir, 'rabbitmq'),
    databaseDir: join(dataDir, 'database'),
    privateDatabaseDir: join(dataDir, 'private-database'),
    composeFilesDir: join(dir, 'compose'),
    composeClientDir: join(dir, 'compose', 'client'),
    logsDir,
    installLog: join(logsDir, 'install.log'),
    runDir,
    supervisorPidFile: join(runDir, 'supervisor.pid'),
    supervisorStatusFile: join(runDir, 'supervisor.json'),
    supervisorLog: join(logsDir, 'supervisor.log'),
    bundlesDir: join(dir, 'bundles'),
    backupsDir: join(dir, 'backups'),
  };
}

/** The repository checkout this code runs from (src/installation → two levels up; dist/src/installation → three). */
export function repositoryRoot(): string {
  const here = fileURLToPath(new URL('.', import.meta.url));
  // dist/src/installation/ has one more level than src/installation/.
  const up = here.includes(`${'/dist/src/'}`) ? '../../..' : '../..';
  return resolve(here, up);
}

/** Default install directory: ./cybercom-data beside the checkout (CYBERCOM_DIR overrides). */
export function defaultInstallDir(): string {
  return join(repositoryRoot(), 'cybercom-data');
}
