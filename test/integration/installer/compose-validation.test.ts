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
import { REPO } from './support.js';

const execFileAsync = promisify(execFile);
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cybercom-compose-'));
  await mkdir(join(dir, 'config'));
  await writeFile(join(dir, 'config', 'service.env'), 'SECRET_KEY=x\n');
  await writeFile(join(dir, 'config', 'worker.env'), 'LOG_LEVEL=info\n');
  await writeFile(join(dir, 'config', 'compose.env'), `CYBERCOM_DIR=${dir}\nSITE_ADDRESS=:80\nTLS_MODE=none\nMONGO_IMAGE=localhost/mongo:test\n`);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function composeConfig(command: string[]): Promise<Record<string, any>> {
  const [bin, ...prefix] = command as [string, ...string[]];
  const { stdout } = await execFileAsync(bin, [...prefix, '-f', join(REPO, 'compose.yaml'), '--env-file', join(dir, 'config', 'compose.env'), 'config'], { cwd: REPO });
  return parse(stdout) as Record<string, any>;
}

async function hasComposeV2(): Promise<boolean> {
  return execFileAsync('docker', ['compose', 'version']).then(() => true, () => false);
}

describe('compose.yaml', () => {
  it('is valid for docker-compose (v1, Debian) and resolves the variables', async () => {
    const config = await composeConfig(['docker-compose']);
    expect(Object.keys(config.services).sort()).toEqual(['api', 'mongo', 'proxy', 'rabbitmq', 'worker']);
    expect(config.services.mongo.image).toBe('localhost/mongo:test');
    expect(config.services.rabbitmq.image).toBe('rabbitmq:4.1');
    expect(JSON.stringify(config.services.api.volumes)).toContain(`${dir}/compose/api`);
  });

  it('is valid for the Compose v2 plugin where installed', async (ctx) => {
    if (!(await hasComposeV2())) ctx.skip();
    const config = await composeConfig(['docker', 'compose']);
    expect(config.services.mongo.image).toBe('localhost/mongo:test');
    expect(config.services.api.depends_on.mongo.condition).toBe('service_healthy');
  });

  it('fails without the installer\'s files (CYBERCOM_DIR unset)', async () => {
    const result = await execFileAsync('docker-compose', ['-f', join(REPO, 'compose.yaml'), 'config'], { cwd: dir, env: { PATH: process.env.PATH } }).then(
      () => 'ok',
      (err: { stderr: string }) => err.stderr,
    );
    expect(result).toContain('run ./installer first');
  });
});

describe('docker/Caddyfile', () => {
  const modes = [
    { mode: 'none', site: ':80', expect: (json: string) => expect(json).toContain('":80"') },
    { mode: 'acme', site: 'data.example.org', expect: (json: string) => expect(json).toMatch(/"email":"ops@example.org","module":"acme"/) },
    { mode: 'files', site: 'data.example.org', expect: (json: string) => expect(json).toContain('"certificate":"/etc/caddy/certs/cert.pem"') },
  ];
  for (const m of modes) {
    it(`adapts in TLS mode ${m.mode}`, async () => {
      const { stdout } = await execFileAsync('caddy', ['adapt', '--config', join(REPO, 'docker', 'Caddyfile')], {
        cwd: dir,
        env: { PATH: process.env.PATH, HOME: dir, SITE_ADDRESS: m.site, TLS_MODE: m.mode, ACME_EMAIL: 'ops@example.org' },
      });
      m.expect(stdout);
      expect(stdout).toContain('"dial":"api:8080"');
    });
  }
});
