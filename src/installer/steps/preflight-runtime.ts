/**
 * Preflight: the chosen runtime can run here. Compose: a reachable container engine and Compose
 * v2 (>= 2.20, for `up --wait`). Local: RabbitMQ from Debian's package, mongod or the database
 * engine (FerretDB v2 on PostgreSQL + DocumentDB), and setpriv when running as root; what is
 * missing is installed by the prerequisites step (through ops/prepare-local.sh), so here it is
 * only reported — except the engine's sources, which are verified here so that a missing or
 * altered source stops the installation before anything is changed.
 */
import { existsSync } from 'node:fs';
import { missingEngineParts, verifyEngineSources } from '../../installation/database-engine.js';
import { compareVersions, detectCompose, detectEngine, MIN_COMPOSE_VERSION } from '../../installation/runner/compose-command.js';
import { findExecutable } from '../../local-services/processes.js';
import type { InstallContext, Step } from '../step.js';

export function missingLocalPrerequisites(config: { dbEngine: string }): string[] {
  const missing: string[] = [];
  if (!existsSync('/usr/lib/rabbitmq/bin/rabbitmq-server')) missing.push('rabbitmq-server (Debian package)');
  const mongod = findExecutable('mongod');
  if (config.dbEngine === 'mongod' && !mongod)
    missing.push('mongod (not packaged by Debian: install MongoDB yourself or use --db-engine ferretdb)');
  if (config.dbEngine === 'ferretdb' || (config.dbEngine === 'auto' && !mongod)) missing.push(...missingEngineParts());
  if (process.getuid?.() === 0 && !findExecutable('setpriv', ['/usr/bin', '/bin'])) missing.push('setpriv (util-linux)');
  return missing;
}

export const preflightRuntime: Step = {
  id: 'preflight-runtime',
  title: 'Runtime prerequisites',
  phase: 'preflight',
  async run(ctx: InstallContext) {
    const [major, minor] = process.versions.node.split('.').map(Number) as [number, number];
    if (major < 20 || (major === 20 && minor < 19)) throw new Error(`Node.js >= 20.19 is required (this is ${process.versions.node})`);
    if (ctx.config.runtime === 'compose') {
      const engine = await detectEngine();
      if ('error' in engine)
        throw new Error(
          `no usable container engine: ${engine.error} (start Docker, or Podman's API with DOCKER_HOST; or use --runtime local)`,
        );
      const compose = await detectCompose();
      if (!compose) throw new Error('Docker Compose v2 not found (`docker compose version`)');
      if (compareVersions(compose.version, MIN_COMPOSE_VERSION) < 0)
        throw new Error(`Compose ${compose.version} is too old: ${MIN_COMPOSE_VERSION} or newer is needed`);
      return `engine ${engine.version}, compose ${compose.version}`;
    }
    ctx.missingPrerequisites = missingLocalPrerequisites(ctx.config);
    if (ctx.missingPrerequisites.some((item) => /DocumentDB|FerretDB/.test(item))) {
      ctx.progress.detail(await verifyEngineSources());
    }
    if (ctx.missingPrerequisites.length === 0)
      return `local processes (node ${process.versions.node}, rabbitmq-server, ${findExecutable('mongod') ? 'mongod' : 'FerretDB'})`;
    for (const item of ctx.missingPrerequisites) ctx.progress.detail(`missing: ${item} (installed by the next steps)`);
    return `${ctx.missingPrerequisites.length} to install`;
  },
};
