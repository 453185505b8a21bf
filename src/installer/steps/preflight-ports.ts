/**
 * Preflight: the ports the services will listen on are free, unless this installation's own
 * running services hold them (a re-run restarts them). The broker and database ports must be
 * reachable by remote workers; the HTTP(S) ports by users.
 */
import { createServer } from 'node:net';
import { openRuntime } from '../../installation/runner/open-runtime.js';
import { apiServesHttps } from '../../installation/env-files.js';
import type { InstallContext, Step } from '../step.js';

/** Resolves with why the port cannot be bound, or undefined when it is free. */
export function portProblem(port: number, host = '0.0.0.0'): Promise<string | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', (err: NodeJS.ErrnoException) => {
      resolve(err.code === 'EADDRINUSE' ? 'in use' : err.code === 'EACCES' ? 'needs root (privileged port)' : err.message);
    });
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(undefined)));
  });
}

export function wantedPorts(ctx: InstallContext): Array<{ name: string; port: number }> {
  const { ports, runtime } = ctx.config;
  const list = [
    { name: 'HTTP', port: ports.http },
    { name: 'AMQPS (broker)', port: ports.broker },
    { name: 'MongoDB TLS', port: ports.database },
  ];
  if (runtime === 'compose' || apiServesHttps(ctx.config)) list.splice(1, 0, { name: 'HTTPS', port: ports.https });
  return list;
}

export const preflightPorts: Step = {
  id: 'preflight-ports',
  title: 'Free ports',
  phase: 'preflight',
  async run(ctx: InstallContext) {
    const ports = wantedPorts(ctx);
    const duplicates = ports.filter((p, i) => ports.findIndex((q) => q.port === p.port) !== i);
    if (duplicates.length > 0) throw new Error(`the same port is chosen twice: ${duplicates.map((d) => d.port).join(', ')}`);
    if (ctx.isUpgrade) {
      const runtime = await openRuntime(ctx.layout, ctx.config);
      ctx.ownRunningServices = await runtime.isRunning().catch(() => false);
      if (ctx.ownRunningServices) return `held by this installation's running services (${ports.map((p) => p.port).join(', ')})`;
    }
    const busy: string[] = [];
    for (const { name, port } of ports) {
      const problem = await portProblem(port);
      if (problem) busy.push(`${name} port ${port}: ${problem}`);
    }
    if (busy.length > 0)
      throw new Error(`ports not available:\n${busy.join('\n')}\n(choose others with --http-port, --https-port, --broker-port, --db-port)`);
    return ports.map((p) => p.port).join(', ');
  },
};
