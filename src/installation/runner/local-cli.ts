/**
 * `cybercom local <run|start|stop|restart|status|logs> [--dir DIR]`: the local runtime's
 * supervisor. `run` is the supervisor itself (foreground; what `start` launches in the
 * background). Exit codes: 0 ok, 1 failure, 2 usage, 3 not running (status).
 */
import { parseArgs } from 'node:util';
import { loadInstallConfig } from '../install-config.js';
import { defaultInstallDir, installLayout } from '../layout.js';
import { LocalRuntime } from './local-runtime.js';
import { runLocalSupervisor } from './local-supervisor.js';

const USAGE = `Usage: cybercom local <command> [--dir DIR]

Runs the installation in DIR (default ./cybercom-data, or CYBERCOM_DIR) as local processes:
the database, RabbitMQ, the API and one worker, restarted when they die.

Commands:
  start                 start in the background; returns once every service runs
  stop                  stop everything (worker and API first)
  restart               stop, then start
  status                process state of every service (exit 3 when not running)
  logs [--service S] [--lines N] [--follow]   S: api, worker, broker, database, supervisor
  run                   the supervisor itself, in the foreground
`;

export async function runLocalCli(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  let values;
  try {
    ({ values } = parseArgs({
      args: rest,
      options: {
        dir: { type: 'string' },
        service: { type: 'string', default: 'api' },
        lines: { type: 'string', default: '100' },
        follow: { type: 'boolean', short: 'f', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    }));
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (values.help || command === undefined || command === 'help') {
    process.stdout.write(USAGE);
    return command === undefined ? 2 : 0;
  }
  const root = values.dir ?? process.env.CYBERCOM_DIR ?? defaultInstallDir();
  const layout = installLayout(root);
  const runtime = new LocalRuntime(layout);
  switch (command) {
    case 'run':
      return runLocalSupervisor(root);
    case 'start':
      await loadInstallConfig(layout.installConfigFile);
      await runtime.start();
      process.stdout.write(`started (supervisor pid ${await runtime.supervisorPid()})\n`);
      return 0;
    case 'stop':
      await runtime.stop();
      process.stdout.write('stopped\n');
      return 0;
    case 'restart':
      await runtime.startOrRestart();
      process.stdout.write('restarted\n');
      return 0;
    case 'status': {
      const states = await runtime.processStates();
      for (const s of states) process.stdout.write(`${s.service.padEnd(10)} ${s.state.padEnd(10)} ${s.detail}\n`);
      return (await runtime.isRunning()) ? 0 : 3;
    }
    case 'logs':
      if (values.follow) {
        await runtime.followLogs(values.service, Number(values.lines));
        return 0;
      }
      process.stdout.write(`${await runtime.logTail(values.service, Number(values.lines))}\n`);
      return 0;
    default:
      process.stderr.write(`unknown command "${command}"\n\n${USAGE}`);
      return 2;
  }
}
