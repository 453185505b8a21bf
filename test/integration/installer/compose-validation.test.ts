/**
 * compose.yaml and docker/Caddyfile checked by real implementations: Compose (`config`, Debian's
 * docker-compose v1, and the v2 plugin when the machine has one) with the env files the
 * installer writes, and Caddy (`caddy adapt`) for each TLS mode of the proxy.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeDerivedConfig } from '../../../src/installation/derived-config.js';
import { installLayout } from '../../../src/installation/layout.js';
import { REPLICA_SET_MEMBERS, replicaSetUri } from '../../../src/installation/replica-set.js';
import { SECRET_KEYS, type Secrets } from '../../../src/installation/secrets.js';
import { ComposeRuntime } from '../../../src/installation/runner/compose-runtime.js';
import { REPO } from './support.js';
import { composeInstallConfig } from '../../support/install-fixtures.js';

const execFileAsync = promisify(execFile);
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cybercom-compose-'));
  await mkdir(join(dir, 'config'));
  await writeFile(join(dir, 'config', 'service.env'), 'SECRET_KEY=x\n');
  await writeFile(join(dir, 'config', 'worker.env'), 'LOG_LEVEL=info\n');
  await writeFile(
    join(dir, 'config', 'compose.env'),
    `CYBERCOM_DIR=${dir}\nSITE_ADDRESS=:80\nTLS_MODE=none\nMONGO_IMAGE=localhost/mongo:test\n`,
  );
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function composeConfig(command: string[]): Promise<Record<string, any>> {
  const [bin, ...prefix] = command as [string, ...string[]];
  const { stdout } = await execFileAsync(
    bin,
    [...prefix, '-f', join(REPO, 'compose.yaml'), '--env-file', join(dir, 'config', 'compose.env'), 'config'],
    { cwd: REPO },
  );
  return parse(stdout) as Record<string, any>;
}

async function hasComposeV2(): Promise<boolean> {
  return execFileAsync('docker', ['compose', 'version']).then(
    () => true,
    () => false,
  );
}

describe('compose.yaml', () => {
  it('is valid for docker-compose (v1, Debian) and resolves the variables', async () => {
    const config = await composeConfig(['docker-compose']);
    // docker-compose v1 lists services of every profile; the Python worker starts only with its own.
    expect(Object.keys(config.services).sort()).toEqual(['api', 'mongo', 'proxy', 'python-worker', 'rabbitmq', 'worker']);
    expect(config.services['python-worker'].profiles).toEqual(['python-worker']);
    expect(config.services.mongo.image).toBe('localhost/mongo:test');
    expect(config.services.rabbitmq.image).toBe('rabbitmq:4.1');
    expect(JSON.stringify(config.services.api.volumes)).toContain(`${dir}/compose/api`);
    // API_REPLICAS absent (an installation from before --api-processes): one API container.
    expect(config.services.api.deploy.replicas).toBe(1);
  });

  it('is valid for the Compose v2 plugin where installed', async (ctx) => {
    if (!(await hasComposeV2())) ctx.skip();
    const config = await composeConfig(['docker', 'compose']);
    expect(config.services.mongo.image).toBe('localhost/mongo:test');
    expect(config.services.api.depends_on.mongo.condition).toBe('service_healthy');
  });

  it("fails without the installer's files (CYBERCOM_DIR unset)", async () => {
    const result = await execFileAsync('docker-compose', ['-f', join(REPO, 'compose.yaml'), 'config'], {
      cwd: dir,
      env: { PATH: process.env.PATH },
    }).then(
      () => 'ok',
      (err: { stderr: string }) => err.stderr,
    );
    expect(result).toContain('run ./installer first');
  });
});

describe('compose.cluster.yaml over compose.yaml', () => {
  it('is valid for the Compose v2 plugin with the files the installer writes for --topology cluster', async (ctx) => {
    if (!(await hasComposeV2())) ctx.skip();
    const layout = installLayout(join(dir, 'cluster'));
    const config = composeInstallConfig({ topology: 'cluster' });
    const secrets = Object.fromEntries(SECRET_KEYS.map((key) => [key, `${key.toLowerCase()}-value`])) as Secrets;
    await mkdir(layout.configDir, { recursive: true });
    await writeDerivedConfig(layout, config, secrets, {});
    // The file list every compose command of this installation uses.
    const files = await new ComposeRuntime(layout).composeFiles();
    expect(files.map((f) => f.split('/').pop())).toEqual(['compose.yaml', 'compose.cluster.yaml']);
    const { stdout } = await execFileAsync(
      'docker',
      ['compose', ...files.flatMap((f) => ['-f', f]), '--env-file', layout.composeEnvFile, '-p', 'cybercom', 'config'],
      { cwd: REPO },
    );
    const resolved = parse(stdout) as Record<string, any>;
    expect(Object.keys(resolved.services)).toEqual(
      expect.arrayContaining(['mongo', 'mongo-2', 'mongo-3', 'mongo-replica-set', 'api', 'worker']),
    );
    // The env file's quoted connection string arrives unquoted in the containers.
    expect(resolved.services.api.environment.MONGO_URI).toBe(replicaSetUri());
    expect(resolved.services.worker.environment.MONGO_URI).toBe(replicaSetUri());
    // compose.yaml's mongod.conf mount is replaced, not doubled.
    const mongoConfigs = (resolved.services.mongo.volumes as Array<{ source: string; target: string }>).filter(
      (v) => v.target === '/etc/mongo/mongod.conf',
    );
    expect(mongoConfigs.map((v) => v.source)).toEqual([join(REPO, 'docker', 'mongod.cluster.conf')]);
    for (const member of REPLICA_SET_MEMBERS) {
      expect(resolved.services[member].volumes.find((v: { target: string }) => v.target === '/run/cybercom/mongo').source).toBe(
        join(layout.root, 'compose', 'mongo'),
      );
    }
    expect(resolved.services.api.depends_on['mongo-replica-set']).toMatchObject({ condition: 'service_completed_successfully' });
    expect(resolved.services['mongo-2'].ports).toBeUndefined();
  });
});

interface CaddyRoute {
  match?: { path?: string[] }[];
  handle: { handler: string; routes?: CaddyRoute[]; load_balancing?: { selection_policy?: unknown } }[];
}

/** Every reverse_proxy of a Caddy JSON config with its route's path match, in order (subroutes of a host opened). */
function proxies(routes: CaddyRoute[]): [string[] | undefined, unknown][] {
  return routes.flatMap((r) =>
    r.handle.flatMap((h): [string[] | undefined, unknown][] => {
      if (h.handler === 'subroute') return proxies(h.routes ?? []);
      return h.handler === 'reverse_proxy' ? [[r.match?.[0]?.path, h.load_balancing?.selection_policy]] : [];
    }),
  );
}

describe('docker/Caddyfile', () => {
  const modes = [
    { mode: 'none', site: ':80', expect: (json: string) => expect(json).toContain('":80"') },
    { mode: 'acme', site: 'data.example.org', expect: (json: string) => expect(json).toMatch(/"email":"ops@example.org","module":"acme"/) },
    {
      mode: 'files',
      site: 'data.example.org',
      expect: (json: string) => expect(json).toContain('"certificate":"/etc/caddy/certs/cert.pem"'),
    },
  ];
  for (const m of modes) {
    it(`adapts in TLS mode ${m.mode}`, async () => {
      const { stdout } = await execFileAsync('caddy', ['adapt', '--config', join(REPO, 'docker', 'Caddyfile')], {
        cwd: dir,
        env: { PATH: process.env.PATH, HOME: dir, SITE_ADDRESS: m.site, TLS_MODE: m.mode, ACME_EMAIL: 'ops@example.org' },
      });
      m.expect(stdout);
      // Every API replica: the A records of `api`, port 8080.
      expect(stdout).toContain('"dynamic_upstreams":{"name":"api","port":"8080"');
      expect(stdout).toContain('"source":"a"');
      // The admin site sticks to one replica by cookie (its Operations numbers are per replica);
      // the rest goes round robin.
      const config = JSON.parse(stdout) as { apps: { http: { servers: Record<string, { routes: CaddyRoute[] }> } } };
      expect(Object.values(config.apps.http.servers).flatMap((server) => proxies(server.routes))).toEqual([
        [['/api/admin*'], { name: 'cybercom_replica', policy: 'cookie' }],
        [undefined, { policy: 'round_robin' }],
      ]);
    });
  }
});
