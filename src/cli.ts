#!/usr/bin/env node
/**
 * One entry point with sub-commands:
 *   serve             run the API server (settings from the environment and ENV_FILE/.env)
 *   dev               start RabbitMQ and the MongoDB-wire server locally (TLS), then the API
 *   createsuperuser   create or update an administrator non-interactively
 *   worker            run a TypeScript task worker (settings from the environment)
 *   local             run an installation as supervised local processes (start/stop/status/logs)
 *   memory-env        print the API process's memory settings as shell exports (the image's start script)
 */
import cluster from 'node:cluster';
import { setFlagsFromString } from 'node:v8';
import { apiRuntimeFlags } from './config/api-memory.js';
import { loadSettings, environmentWithFile, ConfigError } from './config/settings.js';
import { createLogger } from './log/logger.js';
import { WORKER_READY, type WorkerReadyMessage } from './runtime/cluster/messages.js';
import { collectAfterBursts } from './runtime/idle-collector.js';

const USAGE = `Usage: cybercom <command> [options]

Commands:
  serve             Run the API server. Settings come from the environment and from the
                    env file named by ENV_FILE (default: .env in the working directory).
                    API_PROCESSES (default: the number of cores) processes share the port.
  dev               Start local TLS services (RabbitMQ, MongoDB-wire server) under .state/dev
                    and run the API against them on http://localhost:8080 (HTTP_PORT).
  createsuperuser   --username NAME --email ADDR (--password-file FILE | --password-env VAR)
  worker            Run a task worker: WORKER_TASK_MODULES, WORKER_QUEUES, ... (worker --help)
  local             start|stop|restart|status|logs|run an installation made by ./installer
                    as local processes (local --help)
  memory-env        Print the API's memory settings (NODE_OPTIONS, MALLOC_*) as
                    shell \`export\` lines, leaving out what the environment already sets.
  help              Show this text.
`;

async function serve(env: Record<string, string | undefined>): Promise<void> {
  const settings = loadSettings(env);
  const logger = createLogger(settings.logLevel);
  if (cluster.isPrimary && settings.apiProcesses > 1) {
    const { runApiPrimary } = await import('./runtime/cluster/primary.js');
    await runApiPrimary({ processes: settings.apiProcesses, env, logger });
    return;
  }
  // Before the service is loaded, so that its start-up is collected under the same rule.
  for (const flag of apiRuntimeFlags(process.execArgv)) setFlagsFromString(flag);
  // The service is loaded only by the process that serves: a primary that only supervises
  // API processes never holds the web stack (tens of MB per process) in memory.
  const [{ createServiceContext }, { startHttpServer }] = await Promise.all([
    import('./app/service-context.js'),
    import('./app/server.js'),
  ]);
  const ctx = await createServiceContext(settings, logger);
  const running = await startHttpServer(ctx, { settingsEnv: env });
  // A serving process gives the garbage of a burst of requests back as soon as the burst ends.
  collectAfterBursts(running.server);
  if (cluster.isWorker) {
    logger.info({ url: running.url }, 'API process listening');
    process.send?.({ type: WORKER_READY, url: running.url } satisfies WorkerReadyMessage);
  } else {
    logger.info({ url: running.url }, 'API server listening');
  }
  const stop = (signal: string): void => {
    logger.info({ signal }, 'shutting down');
    running.close().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  // Not `once`: a worker of the cluster gets SIGTERM twice (from the primary and, when a
  // supervisor signals the whole process group, directly); the second must not kill it mid-close.
  let stopping = false;
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      if (stopping) return;
      stopping = true;
      stop(signal);
    });
  }
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  const env = environmentWithFile(process.env, process.env.ENV_FILE ?? '.env');
  switch (command) {
    case 'serve':
      await serve(env);
      return -1;
    case 'dev': {
      const { runDev } = await import('./app/dev.js');
      await runDev(rest, serve);
      return -1;
    }
    case 'createsuperuser': {
      const { runCreateSuperuser } = await import('./auth/cli-createsuperuser.js');
      return runCreateSuperuser(rest, env);
    }
    case 'worker': {
      const { runWorkerProcess } = await import('./worker/main.js');
      return runWorkerProcess(rest, env as NodeJS.ProcessEnv);
    }
    case 'local': {
      const { runLocalCli } = await import('./installation/runner/local-cli.js');
      return runLocalCli(rest);
    }
    case 'memory-env': {
      const { apiMemoryExports } = await import('./config/api-memory.js');
      for (const line of apiMemoryExports(process.env)) process.stdout.write(`${line}\n`);
      return 0;
    }
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(USAGE);
      return command === undefined ? 2 : 0;
    default:
      process.stderr.write(`Unknown command "${command}".\n\n${USAGE}`);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (err: unknown) => {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(78); // EX_CONFIG
    }
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
