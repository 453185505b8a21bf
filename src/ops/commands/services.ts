/** ops/services start|stop|restart: the whole stack, for either runtime. */
import { waitUntilHealthy } from '../../installation/health.js';
import { openRuntime } from '../../installation/runner/open-runtime.js';
import { CommandError, DIR_HELP, EXIT, loadInstallation, parseCommandArgs, type Command } from './common.js';

export const SERVICES_HELP = `Usage: ops/services <start|stop|restart> [--dir DIR]

Starts, stops or restarts every service of the installation (compose stack or local
processes). start and restart return once every service is healthy.

${DIR_HELP}
Exit codes: 0 ok, 1 failed (or not healthy in time), 2 usage error, 3 no installation.
`;

export const services: Command = async (argv) => {
  const { values, positionals } = parseCommandArgs(argv, {}, true);
  if (values.help) {
    process.stdout.write(SERVICES_HELP);
    return EXIT.ok;
  }
  const action = positionals[0];
  if (!['start', 'stop', 'restart'].includes(action ?? '') || positionals.length !== 1)
    throw new CommandError('say start, stop or restart', EXIT.usage);
  const inst = await loadInstallation(values.dir);
  const runtime = await openRuntime(inst.layout, inst.config);
  if (action === 'stop') {
    await runtime.stop();
    process.stdout.write('stopped\n');
    return EXIT.ok;
  }
  if (action === 'start' && (await runtime.isRunning())) process.stdout.write('already running\n');
  else await runtime.startOrRestart();
  await waitUntilHealthy(inst, 180_000);
  process.stdout.write(`${action === 'start' ? 'started' : 'restarted'}; all services healthy\n`);
  return EXIT.ok;
};
