/**
 * The local runtime's supervisor (`cybercom local run`): one long-lived process that runs the
 * database (mongod or FerretDB), RabbitMQ, the API and one worker as child processes with the
 * installation's configuration and certificates, restarts any of them that dies (with backoff),
 * and stops them all, in order, on SIGTERM. Children never outlive it (see local-services/processes).
 * `cybercom local start` launches it in the background; its state goes to run/supervisor.json.
 */
import { chmod, mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { MongoClient } from 'mongodb';
import { Backoff, type BackoffOptions } from '../../lib/backoff.js';
import { startMongoWire, startPrivateFerretDb, type MongoWireHandle, type MongoWireKind } from '../../local-services/mongo-wire.js';
import { waitForPortFree } from '../../local-services/ports.js';
import { spawnManaged, type ExitStatus } from '../../local-services/processes.js';
import { startRabbitMq } from '../../local-services/rabbitmq.js';
import { assertTraversable, commandAs } from '../../local-services/service-user.js';
import { certificatePaths } from '../certificates.js';
import { legacyMigrationPending } from '../database-migration.js';
import { ensureDatabaseUsers } from '../database-users.js';
import { apiListenPort, localListenAddress, SERVICE_DATABASE } from '../env-files.js';
import { hostMongoClient } from '../host-connections.js';
import { loadInstallConfig, type InstallConfig } from '../install-config.js';
import { hasPrivateStore, hostPrivateMongoClient, moveServiceData, privateStoreLogin } from '../private-store.js';
import { installLayout, type InstallLayout } from '../layout.js';
import { ACCOUNTS, loadSecrets, type Secrets } from '../secrets.js';
import { prepareServiceAccounts, SERVICE_USERS, type NodeService, type ServiceAccount } from '../service-accounts.js';
import { baseEnvironment, cliCommand } from './node-command.js';
import { apiExecArgv, apiProcessEnv } from '../../config/api-memory.js';
import {
  readPidFile,
  writeSupervisorStatus,
  type LocalServiceName,
  type ServiceProcessStatus,
  type SupervisorStatus,
} from './supervisor-status.js';

interface RunningService {
  pid?: number;
  exited: Promise<ExitStatus | unknown>;
  stop(): Promise<void>;
}

export interface ServiceDefinition {
  name: LocalServiceName;
  logFile: string;
  /** The port it listens on: must be free before it starts (see keepRunning). */
  port?: number;
  /**
   * The services (defined before it) that must have started before it starts. Services that
   * need none of each other start side by side: the database and the broker take tens of
   * seconds each, and an install or restart waits for the slower one instead of both in turn.
   */
  after?: readonly LocalServiceName[];
  start(): Promise<RunningService>;
}

/**
 * How long the supervisor waits before starting a service again. A service that had been up for
 * ten seconds and then died crashed: it comes back after a second, however often that happens
 * (engine kills 20-40 s apart took 37 s each to recover when this was a minute: the wait, not the
 * engine, set the pace). Only one that dies within ten seconds of being up, or fails to start, is
 * in a loop and backs off, up to 30 s.
 */
export const RESTART_BACKOFF: BackoffOptions = { initialMs: 1000, maxMs: 30_000, stableMs: 10_000 };
/** How long a service waits for its port to be released by a process still shutting down. */
const PORT_FREE_TIMEOUT_MS = 60_000;
/** How often the supervisor checks that its pid file still names it. */
const PID_FILE_CHECK_MS = 5_000;

function databaseService(layout: InstallLayout, config: InstallConfig, secrets: Secrets): ServiceDefinition {
  const ca = certificatePaths(layout.certsDir, 'ca');
  const clientCa = certificatePaths(layout.certsDir, 'client-ca');
  const server = certificatePaths(layout.certsDir, 'mongodb');
  const kind: MongoWireKind | undefined = config.dbEngine === 'auto' ? undefined : config.dbEngine;
  return {
    name: 'database',
    logFile: join(layout.databaseDir, `${kind ?? 'ferretdb'}.log`),
    port: config.ports.database,
    async start() {
      // Earlier versions' FerretDB v1 files are not read by this engine: starting it would serve
      // an empty database. The installer migrates them first.
      if (legacyMigrationPending(layout)) {
        throw new Error(
          `${layout.databaseDir} holds FerretDB v1 data that is not migrated yet: run ./installer --dir ${layout.root} to migrate it`,
        );
      }
      const handle = await startMongoWire({
        dir: layout.databaseDir,
        caFile: ca.certFile,
        clientCaFile: clientCa.certFile,
        certFile: server.certFile,
        keyFile: server.keyFile,
        certKeyFile: server.combinedFile,
        clientCertKeyFile: certificatePaths(layout.certsDir, 'api').combinedFile,
        port: config.ports.database,
        bindHost: localListenAddress(config),
        username: ACCOUNTS.database.admin,
        password: secrets.DB_ADMIN_PASSWORD,
        // FerretDB: the API's and the workers' logins, set in SQL as the engine starts (no role
        // management through the wire there); mongod: by ensureDatabaseUsers below.
        logins: [
          { username: ACCOUNTS.database.api, password: secrets.DB_API_PASSWORD },
          { username: ACCOUNTS.database.worker, password: secrets.DB_WORKER_PASSWORD },
        ],
        kind,
        // What a crashed cluster left behind and was killed before the restart: the supervisor's log.
        log: (message) => process.stderr.write(`${new Date().toISOString()} database: ${message}\n`),
      });
      this.logFile = handle.logFile;
      let privateStore: MongoWireHandle | undefined;
      // The API's and the workers' users, created or brought to the passwords in secrets.env.
      const admin = hostMongoClient(layout, config, secrets, { who: 'admin' });
      try {
        if (handle.kind === 'mongod') await ensureDatabaseUsers(admin, secrets);
        // The same decision as the API's settings (appliance/env-files.ts) make.
        if (hasPrivateStore(config)) privateStore = await startPrivateStore(layout, secrets, admin);
      } catch (err) {
        await handle.stop().catch(() => undefined); // not left running behind a failed start
        throw err;
      } finally {
        await admin.close();
      }
      return privateStore ? bothEngines(handle, privateStore) : handle;
    },
  };
}

/**
 * The private store beside FerretDB (see appliance/private-store.ts), with the service data of an
 * installation from before it moved in, before the API starts.
 */
async function startPrivateStore(layout: InstallLayout, secrets: Secrets, main: MongoClient): Promise<MongoWireHandle> {
  const store = await startPrivateFerretDb({
    dir: layout.privateDatabaseDir,
    // The API's user may open its socket; the worker's may not.
    clientGroup: process.getuid?.() === 0 ? SERVICE_USERS.api : undefined,
    ...privateStoreLogin(secrets),
    log: (message) => process.stderr.write(`${new Date().toISOString()} private database: ${message}\n`),
  });
  const client = hostPrivateMongoClient(layout, secrets);
  try {
    const log = (line: string): void => void process.stdout.write(`${new Date().toISOString()} ${line}\n`);
    await moveServiceData(main, client, SERVICE_DATABASE, log);
  } catch (err) {
    await store.stop().catch(() => undefined);
    throw err;
  } finally {
    await client.close();
  }
  return store;
}

/** One service of two engines: down when either is, stopped private store first. */
function bothEngines(main: MongoWireHandle, privateStore: MongoWireHandle): RunningService {
  return {
    pid: main.pid,
    exited: Promise.race([main.exited, privateStore.exited]),
    stop: async () => {
      await privateStore.stop().catch(() => undefined);
      await main.stop();
    },
  };
}

function brokerService(layout: InstallLayout, config: InstallConfig, secrets: Secrets): ServiceDefinition {
  const ca = certificatePaths(layout.certsDir, 'ca');
  const clientCa = certificatePaths(layout.certsDir, 'client-ca');
  const server = certificatePaths(layout.certsDir, 'rabbitmq');
  const client = certificatePaths(layout.certsDir, 'api');
  return {
    name: 'broker',
    logFile: join(layout.brokerDir, 'rabbitmq.log'),
    port: config.ports.broker,
    start: () =>
      startRabbitMq({
        dir: layout.brokerDir,
        caFile: ca.certFile,
        clientCaFile: clientCa.certFile,
        certFile: server.certFile,
        keyFile: server.keyFile,
        clientCertFile: client.certFile,
        clientKeyFile: client.keyFile,
        port: config.ports.broker,
        bindHost: localListenAddress(config),
        username: ACCOUNTS.broker.admin,
        password: secrets.BROKER_ADMIN_PASSWORD,
        vhost: ACCOUNTS.vhost,
        definitionsFile: layout.brokerDefinitionsFile,
      }),
  };
}

function nodeService(
  name: NodeService,
  layout: InstallLayout,
  account: ServiceAccount,
  envFile: string,
  args: string[],
  port?: number,
): ServiceDefinition {
  const logFile = join(layout.logsDir, `${name}.log`);
  return {
    name,
    logFile,
    port,
    async start() {
      const { command, args: cliArgs, cwd } = cliCommand(...args);
      // The API runs with its memory settings also as a single process (API_PROCESSES=1).
      const fullArgs = name === 'api' ? [...apiExecArgv([]), ...cliArgs] : cliArgs;
      const memoryEnv = name === 'api' ? apiProcessEnv({}) : {};
      // As the service's own OS user (see service-accounts.ts), which must be able to reach the checkout.
      await assertTraversable(account.runAs, cliArgs[0] ?? cwd, SERVICE_USERS[name]);
      const [program, programArgs] = commandAs(account.runAs, command, fullArgs);
      const child = await spawnManaged(program, programArgs, {
        logFile,
        cwd,
        env: baseEnvironment({ ENV_FILE: envFile, NODE_ENV: 'production', ...memoryEnv, ...account.runAs.env, ...account.env }),
      });
      return { pid: child.pid, exited: child.exited, stop: async () => void (await child.terminate(name === 'worker' ? 35_000 : 10_000)) };
    },
  };
}

export class LocalSupervisor {
  private readonly status: SupervisorStatus;
  private readonly running = new Map<LocalServiceName, RunningService>();
  private stopping = false;
  private stopped: Promise<void> | undefined;
  private readonly stopRequested: Promise<void>;
  private requestStop!: () => void;
  private readonly stopSignal: AbortSignal;

  constructor(
    private readonly layout: InstallLayout,
    private readonly services: ServiceDefinition[],
    private readonly backoff: BackoffOptions = RESTART_BACKOFF,
  ) {
    this.status = { pid: process.pid, startedAt: new Date().toISOString(), ready: false, stopping: false, services: {} };
    const abort = new AbortController();
    this.stopSignal = abort.signal;
    this.stopRequested = new Promise((resolve) => (this.requestStop = resolve));
    void this.stopRequested.then(() => abort.abort(new Error('stop requested')));
  }

  private async save(): Promise<void> {
    await writeSupervisorStatus(this.layout.supervisorStatusFile, this.status).catch(() => undefined);
  }

  private async mark(name: LocalServiceName, patch: Partial<ServiceProcessStatus>): Promise<void> {
    const current = this.status.services[name] ?? { state: 'starting', restarts: 0, since: new Date().toISOString(), logFile: '' };
    this.status.services[name] = { ...current, ...patch };
    await this.save();
  }

  /** Starts one service and keeps it running until the supervisor stops. */
  private async keepRunning(def: ServiceDefinition, firstStart: () => void, firstFailure: (err: Error) => void): Promise<void> {
    const backoff = new Backoff(this.backoff);
    let started = false;
    for (let attempt = 0; !this.stopping; attempt++) {
      await this.mark(def.name, {
        state: attempt === 0 ? 'starting' : 'restarting',
        logFile: def.logFile,
        since: new Date().toISOString(),
      });
      let service: RunningService;
      try {
        // A previous process of this service (ours after a crash, or the last supervisor's) may
        // still be releasing the port; its successor must not start against it.
        if (def.port !== undefined) await waitForPortFree(def.port, PORT_FREE_TIMEOUT_MS, { signal: this.stopSignal });
        service = await def.start();
      } catch (err) {
        if (this.stopping) {
          await this.mark(def.name, { state: 'stopped', pid: undefined });
          return;
        }
        const message = (err as Error).message;
        await this.mark(def.name, { state: 'failed', lastError: message.slice(0, 4000), logFile: def.logFile });
        if (!started) {
          firstFailure(err as Error);
          return;
        }
        await Promise.race([sleep(backoff.next()), this.stopRequested]);
        continue;
      }
      if (this.stopping) {
        // Asked to stop while this one was starting: stop() did not see it, so it is ours to stop.
        await service.stop().catch(() => undefined);
        await this.mark(def.name, { state: 'stopped', pid: undefined });
        return;
      }
      this.running.set(def.name, service);
      const pid = service.pid;
      await this.mark(def.name, { state: 'running', pid, logFile: def.logFile, since: new Date().toISOString(), lastError: undefined });
      if (!started) {
        started = true;
        firstStart();
      }
      const upSince = Date.now();
      const outcome = await Promise.race([service.exited.then(() => 'exited' as const), this.stopRequested.then(() => 'stop' as const)]);
      if (outcome === 'stop') return; // stop() stops it, in order
      this.running.delete(def.name);
      // Whatever the dead process left in its group (children) goes before the next attempt.
      await service.stop().catch(() => undefined);
      const status = this.status.services[def.name];
      await this.mark(def.name, {
        state: 'restarting',
        pid: undefined,
        restarts: (status?.restarts ?? 0) + 1,
        lastError: 'exited unexpectedly',
      });
      // A service that ran for a while gets a fresh backoff; a crash loop backs off.
      await Promise.race([sleep(backoff.afterRun(Date.now() - upSince)), this.stopRequested]);
    }
  }

  /**
   * Starts every service once the services it comes after have started (those that need none of
   * each other side by side), then supervises them. A service that fails its first start fails
   * the whole start-up: the others are stopped and the supervisor returns 1.
   */
  async run(): Promise<number> {
    await this.save();
    const loops: Promise<void>[] = [];
    const firstStarts = new Map<LocalServiceName, Promise<void>>();
    for (const def of this.services) {
      const needed = (def.after ?? []).map((name) => {
        const started = firstStarts.get(name);
        if (!started) throw new Error(`${def.name} comes after ${name}, which is not defined before it`);
        return started;
      });
      firstStarts.set(
        def.name,
        Promise.all(needed).then(() => this.startFirst(def, loops)),
      );
    }
    const stopped = this.stopRequested.then(() => new Error('stopped during start-up'));
    const failure = await Promise.race([Promise.all(firstStarts.values()).then(() => undefined), stopped]).catch(
      (err: unknown) => err as Error,
    );
    if (failure !== undefined) {
      this.status.error = failure.message;
      await this.save();
      await this.stop();
      await Promise.allSettled(loops);
      return 1;
    }
    this.status.ready = true;
    await this.save();
    await this.stopRequested;
    // Return (and let the process exit) only once every service has stopped: whoever restarts
    // us waits for this process, and must not meet our services still holding ports and files.
    await this.stop();
    await Promise.allSettled(loops);
    return 0;
  }

  /** Launches the service's keepRunning loop; settles when its first start succeeded or failed. */
  private startFirst(def: ServiceDefinition, loops: Promise<void>[]): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      // Start-up already failed elsewhere or a stop came while this one waited for others.
      if (this.stopping) return reject(new Error(`${def.name}: not started, the supervisor is stopping`));
      loops.push(
        this.keepRunning(def, resolve, (err) => reject(new Error(`${def.name}: ${err.message}`))).finally(() =>
          reject(new Error(`${def.name}: stopped during start-up`)),
        ),
      );
    });
  }

  /**
   * Stops services in reverse order: worker and API first, so they never see the broker vanish.
   * Every call returns the same promise, which settles once all of them are gone.
   */
  stop(): Promise<void> {
    return (this.stopped ??= this.stopInOrder());
  }

  private async stopInOrder(): Promise<void> {
    this.stopping = true;
    this.status.stopping = true;
    await this.save();
    this.requestStop();
    for (const def of [...this.services].reverse()) {
      const service = this.running.get(def.name);
      if (service) await service.stop().catch(() => undefined);
      this.running.delete(def.name);
      await this.mark(def.name, { state: 'stopped', pid: undefined });
    }
  }
}

export async function runLocalSupervisor(root: string): Promise<number> {
  const layout = installLayout(root);
  const config = await loadInstallConfig(layout.installConfigFile);
  const secrets = await loadSecrets(layout.secretsFile);
  // The broker runs as the `rabbitmq` user, which must be able to walk into its data directory;
  // config/ and certs/ stay 0700 (the broker reads its own copies of what it needs).
  await chmod(layout.root, 0o755);
  await mkdir(layout.dataDir, { recursive: true, mode: 0o755 });
  await chmod(layout.dataDir, 0o755);
  await Promise.all([layout.logsDir, layout.runDir].map((d) => mkdir(d, { recursive: true, mode: 0o750 })));
  const accounts = await prepareServiceAccounts(layout, config);
  const supervisor = new LocalSupervisor(layout, [
    databaseService(layout, config, secrets),
    brokerService(layout, config, secrets),
    { ...nodeService('api', layout, accounts.api, layout.serviceEnvFile, ['serve'], apiListenPort(config)), after: ['database', 'broker'] },
    { ...nodeService('worker', layout, accounts.worker, layout.workerEnvFile, ['worker']), after: ['api'] },
  ]);
  const onSignal = (): void => void supervisor.stop();
  // SIGUSR2 (what `local stop` sends) stops in order: worker, API, broker, database. SIGTERM and
  // friends also reach every child group at once (local-services/processes), a faster stop.
  for (const signal of ['SIGUSR2', 'SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(signal, onSignal);
  await writeFile(layout.supervisorPidFile, `${process.pid}\n`, { mode: 0o644 });
  // The pid file is how `local stop` (and the installer) find us. Once it is gone or names another
  // process (the install directory was removed, say), nothing could stop us any more: stop.
  let misses = 0;
  const watch = setInterval(() => {
    void readPidFile(layout.supervisorPidFile).then((pid) => {
      misses = pid === process.pid ? 0 : misses + 1;
      if (misses < 2) return; // twice in a row, so a passing hiccup reading it does not stop us
      clearInterval(watch);
      process.stderr.write(
        `${new Date().toISOString()} ${layout.supervisorPidFile} no longer names this supervisor (pid ${process.pid}): stopping\n`,
      );
      void supervisor.stop();
    });
  }, PID_FILE_CHECK_MS);
  watch.unref();
  try {
    return await supervisor.run();
  } finally {
    clearInterval(watch);
    const pid = await readPidFile(layout.supervisorPidFile);
    if (pid === process.pid) await rm(layout.supervisorPidFile, { force: true });
  }
}
