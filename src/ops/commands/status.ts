/**
 * ops/status: the processes of the chosen runtime and the health of every service as a user sees
 * it (TLS logins to database and broker, the API through its public port, a worker ping), then
 * the workers (active and processed tasks, last heartbeat) and the task queues (depth, consumers).
 * Exit codes: 0 all healthy, 1 something is unhealthy, 2 usage, 3 no installation.
 */
import { formatClusterStatus, readClusterStatus, type ClusterStatus } from '../../installation/cluster-status.js';
import { apiBrokerSession, checkAll, type Installation } from '../../installation/health.js';
import { openRuntime } from '../../installation/runner/open-runtime.js';
import { DIR_HELP, EXIT, loadInstallation, parseCommandArgs, type Command } from './common.js';

export const STATUS_HELP = `Usage: ops/status [--dir DIR] [--json]

Shows the state of every service of the installation (compose containers or local processes)
and checks each as a client would: database and broker logins over TLS with a client
certificate, the API's /api/health/ on the public port, and a remote-control ping answered by a
worker. Then lists the workers (online, active and processed tasks, last heartbeat) and the task
queues they consume (messages waiting, consumers), gathered for about two seconds.

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
  const broker = checks.find((c) => c.name === 'broker');
  const cluster = broker?.ok ? await clusterOf(inst) : { workers: [], queues: [] };
  if (values.json) {
    process.stdout.write(`${JSON.stringify({ runtime: runtime.kind, healthy, processes, checks, ...cluster }, null, 2)}\n`);
  } else {
    process.stdout.write(`Installation ${inst.layout.root} (${runtime.kind} runtime)\n\nProcesses:\n`);
    for (const p of processes) process.stdout.write(`  ${p.service.padEnd(11)} ${p.state.padEnd(12)} ${p.detail}\n`);
    process.stdout.write('\nHealth:\n');
    for (const c of checks) process.stdout.write(`  ${c.name.padEnd(11)} ${(c.ok ? 'ok' : 'FAILING').padEnd(12)} ${c.detail}\n`);
    process.stdout.write(`\n${formatClusterStatus(cluster)}`);
    process.stdout.write(`\n${healthy ? 'All services healthy.' : 'Some services are unhealthy: see ops/logs --service <name>.'}\n`);
  }
  return healthy ? EXIT.ok : EXIT.failed;
};

/** Workers and queues; empty when they cannot be read (the health checks already say why). */
async function clusterOf(inst: Installation): Promise<ClusterStatus> {
  const session = apiBrokerSession(inst).start();
  try {
    await session.waitUntilConnected(5_000);
    return await readClusterStatus(session);
  } catch {
    return { workers: [], queues: [] };
  } finally {
    await session.close().catch(() => undefined);
  }
}
