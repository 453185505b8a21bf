/** ops/logs: the logs of one service, or the recent lines of all, for either runtime. */
import { openRuntime } from '../../installation/runner/open-runtime.js';
import { CommandError, DIR_HELP, EXIT, loadInstallation, parseCommandArgs, type Command } from './common.js';

export const LOGS_HELP = `Usage: ops/logs [--dir DIR] [--service NAME] [--lines N] [--follow]

Prints the last lines of a service's log (default: 40 lines of every service).
Services: local runtime: database, broker, api, worker, supervisor, install;
          compose: proxy, api, worker, rabbitmq, mongo, install.

${DIR_HELP}
  --service NAME       one service
  --lines N            how many lines (default 40, or 200 with --service)
  -f, --follow         keep printing new lines (needs --service)
Exit codes: 0 ok, 1 failed, 2 usage error, 3 no installation.
`;

export const logs: Command = async (argv) => {
  const { values } = parseCommandArgs(argv, {
    service: { type: 'string' },
    lines: { type: 'string' },
    follow: { type: 'boolean', short: 'f', default: false },
  });
  if (values.help) {
    process.stdout.write(LOGS_HELP);
    return EXIT.ok;
  }
  const inst = await loadInstallation(values.dir);
  const runtime = await openRuntime(inst.layout, inst.config);
  const lines = values.lines === undefined ? (values.service ? 200 : 40) : Number(values.lines);
  if (!Number.isInteger(lines) || lines <= 0) throw new CommandError('--lines needs a positive whole number', EXIT.usage);
  const known = [...runtime.services, 'install'];
  if (values.service !== undefined && !known.includes(values.service)) {
    throw new CommandError(`unknown service "${values.service}" (one of ${known.join(', ')})`, EXIT.usage);
  }
  if (values.follow) {
    if (!values.service) throw new CommandError('--follow needs --service', EXIT.usage);
    await runtime.followLogs(values.service, lines);
    return EXIT.ok;
  }
  const { tailFile } = await import('../../installation/runner/log-files.js');
  const read = (service: string): Promise<string> =>
    service === 'install' ? tailFile(inst.layout.installLog, lines) : runtime.logTail(service, lines);
  for (const service of values.service ? [values.service] : known) {
    const text = await read(service).catch((err: Error) => `(unavailable: ${err.message})`);
    if (!values.service) process.stdout.write(`==> ${service} <==\n`);
    process.stdout.write(text.endsWith('\n') || text === '' ? text : `${text}\n`);
  }
  return EXIT.ok;
};
