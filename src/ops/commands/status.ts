/**
 * ops/status: the processes of the chosen runtime and the health of every service as a user sees
 * it (TLS logins to database and broker, the API through its public port, a worker ping).
 * Exit codes: 0 all healthy, 1 something is unhealthy, 2 usage, 3 no installation.
 */
import { checkAll } from '../appliance/health.js';
import { openRuntime } from '../runtime/service-runtime.js';
import { DIR_HELP, EXIT, loadInstallation, parseCommandArgs, type Command } from './common.js';

export const STATUS_HELP = `Usage: ops/status [--dir DIR] [--json]

Shows the state of every service of the installation (compose containers or local processes)
and checks each as a client would: database and broker logins over TLS with a client
certificate, the API's /api/health/ on the public port, and a remote-control ping answered by a
worker.

${DIR_HELP}
  --json               machine-readable output
Exit codes: 0 all healthy, 1 something is unhealthy, 2 usage error, 3 no installation.
`;

export const status: Command = async (argv) => {
  const { values } = parseCommandArgs(argv, { json: { type: 'boolean', default: false } });
  if (values.help) {
    process.stdout.write(STATUS_HELP);
    return EXIT.ok;
  }
  const inst = await loadInstallation(values.dir);
  const runtime = await openRuntime(inst.layout, inst.config);
  const processes = await runtime.processStates().catch((err: Error) => [{ service: runtime.kind, state: 'unknown', detail: err.message }]);
  const checks = await checkAll(inst);
  const healthy = checks.every((c) => c.ok);
  if (values.json) {
    process.stdout.write(`${JSON.stringify({ runtime: runtime.kind, healthy, processes, checks }, null, 2)}\n`);
  } else {
    process.stdout.write(`Installation ${inst.layout.root} (${runtime.kind} runtime)\n\nProcesses:\n`);
    for (const p of processes) process.stdout.write(`  ${p.service.padEnd(11)} ${p.state.padEnd(12)} ${p.detail}\n`);
    process.stdout.write('\nHealth:\n');
    for (const c of checks) process.stdout.write(`  ${c.name.padEnd(11)} ${(c.ok ? 'ok' : 'FAILING').padEnd(12)} ${c.detail}\n`);
    process.stdout.write(`\n${healthy ? 'All services healthy.' : 'Some services are unhealthy: see ops/logs --service <name>.'}\n`);
  }
  return healthy ? EXIT.ok : EXIT.failed;
};
