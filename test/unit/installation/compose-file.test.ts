/**
 * Security properties of compose.yaml and the files it mounts: no plaintext broker or database
 * port, TLS with client-certificate verification configured, healthchecks and health-gated
 * start order, restart policies, named volumes, every image overridable, no secret inline, and
 * images that run as non-root with production dependencies only.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';

const repo = join(__dirname, '..', '..', '..');
const read = (file: string): string => readFileSync(join(repo, file), 'utf8');

interface Service {
  image: string;
  profiles?: string[];
  ports?: string[];
  healthcheck?: { test: string[] | string };
  depends_on?: Record<string, { condition: string }>;
  environment?: Record<string, string>;
  restart?: string;
  volumes?: string[];
  read_only?: boolean;
  env_file?: string[];
  build?: { args?: Record<string, string> };
}

const compose = parse(read('compose.yaml'), { merge: true }) as { services: Record<string, Service>; volumes: Record<string, unknown> };
const services = compose.services;

describe('compose.yaml', () => {
  it('has the five services, and the Python worker behind a profile of its own', () => {
    expect(Object.keys(services).sort()).toEqual(['api', 'mongo', 'proxy', 'python-worker', 'rabbitmq', 'worker']);
    expect(services['python-worker']?.profiles).toEqual(['python-worker']);
  });

  it('publishes only the proxy ports and the TLS ports of broker and database', () => {
    const published = Object.fromEntries(
      Object.entries(services).map(([name, s]) => [name, (s.ports ?? []).map((p) => p.split(':').pop())]),
    );
    expect(published).toEqual({ proxy: ['80', '443'], api: [], worker: [], 'python-worker': [], rabbitmq: ['5671'], mongo: ['27017'] });
    const all = JSON.stringify(services);
    for (const plaintext of ['5672', '15672', '15692', '28017']) expect(all).not.toContain(plaintext);
  });

  it('configures RabbitMQ for AMQPS only with verified client certificates', () => {
    const conf = read('docker/rabbitmq.conf');
    expect(conf).toMatch(/^listeners\.tcp = none$/m);
    expect(conf).toMatch(/^listeners\.ssl\.default = 5671$/m);
    expect(conf).toMatch(/^ssl_options\.verify = verify_peer$/m);
    expect(conf).toMatch(/^ssl_options\.fail_if_no_peer_cert = true$/m);
    // Clients are verified against the client CA alone (rotations replace it), not the server CA.
    expect(conf).toMatch(/^ssl_options\.cacertfile = \/run\/cybercom\/rabbitmq\/client-ca\.pem$/m);
    expect(conf).not.toMatch(/default_pass|default_user/);
    expect(read('docker/rabbitmq-enabled-plugins').trim()).toBe('[].');
    expect(services.rabbitmq?.volumes).toContain('./docker/rabbitmq.conf:/etc/rabbitmq/rabbitmq.conf:ro');
  });

  it('configures MongoDB with requireTLS, client-certificate verification and authorization', () => {
    const conf = parse(read('docker/mongod.conf')) as { net: { tls: Record<string, string> }; security: { authorization: string } };
    expect(conf.net.tls.mode).toBe('requireTLS');
    expect(conf.net.tls.CAFile).toBe('/run/cybercom/mongo/ca.pem');
    expect(conf.net.tls.clusterCAFile).toBe('/run/cybercom/mongo/client-ca.pem');
    expect(conf.net.tls.certificateKeyFile).toBeTruthy();
    expect(conf.net.tls).not.toHaveProperty('allowConnectionsWithoutCertificates');
    expect(conf.net.tls).not.toHaveProperty('allowInvalidCertificates');
    expect(conf.security.authorization).toBe('enabled');
  });

  it('gives every service a healthcheck, a restart policy and health-gated dependencies', () => {
    for (const [name, s] of Object.entries(services)) {
      expect(s.healthcheck?.test, name).toBeTruthy();
      expect(s.restart, name).toBe('unless-stopped');
      for (const [dep, condition] of Object.entries(s.depends_on ?? {}))
        expect(condition.condition, `${name} -> ${dep}`).toBe('service_healthy');
    }
    expect(Object.keys(services.api?.depends_on ?? {}).sort()).toEqual(['mongo', 'rabbitmq']);
    expect(Object.keys(services.worker?.depends_on ?? {}).sort()).toEqual(['mongo', 'rabbitmq']);
    expect(Object.keys(services['python-worker']?.depends_on ?? {}).sort()).toEqual(['mongo', 'rabbitmq']);
    expect(Object.keys(services.proxy?.depends_on ?? {})).toEqual(['api']);
  });

  it('lets every image be replaced by an environment variable', () => {
    const expected: Record<string, string> = {
      proxy: 'PROXY_IMAGE',
      api: 'API_IMAGE',
      worker: 'WORKER_IMAGE',
      'python-worker': 'PYTHON_WORKER_IMAGE',
      rabbitmq: 'RABBITMQ_IMAGE',
      mongo: 'MONGO_IMAGE',
    };
    for (const [name, variable] of Object.entries(expected))
      expect(services[name]?.image, name).toMatch(new RegExp(`^\\$\\{${variable}:-[^}]+\\}$`));
    expect(services.api?.build?.args?.NODE_IMAGE).toMatch(/^\$\{NODE_IMAGE:-node:/);
    expect(services.worker?.build?.args?.NODE_IMAGE).toMatch(/^\$\{NODE_IMAGE:-node:/);
  });

  it('keeps data in named volumes', () => {
    expect(services.mongo?.volumes).toContain('mongo-data:/data/db');
    expect(services.rabbitmq?.volumes).toContain('rabbitmq-data:/var/lib/rabbitmq');
    expect(Object.keys(compose.volumes)).toEqual(expect.arrayContaining(['mongo-data', 'rabbitmq-data', 'caddy-data']));
  });

  it('has no secret inline: passwords come from files and env files', () => {
    for (const [name, s] of Object.entries(services)) {
      for (const [key, value] of Object.entries(s.environment ?? {})) {
        if (/PASS|SECRET|TOKEN|KEY/i.test(key)) {
          expect(key, `${name}.${key}`).toMatch(/_FILE$/);
          expect(value).toMatch(/^\/run\//);
        }
      }
    }
    expect(read('compose.yaml')).not.toMatch(/password\s*[:=]\s*["']?[A-Za-z0-9]/i);
    expect(services.api?.env_file?.[0]).toContain('/config/service.env');
    expect(services.worker?.env_file?.[0]).toContain('/config/worker.env');
    expect(services['python-worker']?.env_file?.[0]).toContain('/config/worker.env');
  });

  it('runs the API and the worker read-only, from multi-stage non-root images with production dependencies', () => {
    expect(services.api?.read_only).toBe(true);
    expect(services.worker?.read_only).toBe(true);
    for (const file of ['docker/api.Dockerfile', 'worker-image/Dockerfile']) {
      const dockerfile = read(file);
      expect(dockerfile).toMatch(/^ARG NODE_IMAGE=node:24-bookworm-slim$/m);
      expect(dockerfile.match(/^FROM /gm)?.length, file).toBeGreaterThanOrEqual(3);
      expect(dockerfile).toContain('npm ci --omit=dev');
      expect(dockerfile).toMatch(/^USER node$/m);
    }
    // The Python worker: the client wheel built from the repository in a stage of its own, run as uid 1000 too.
    expect(services['python-worker']?.read_only).toBe(true);
    const python = read('worker-image/python/Dockerfile');
    expect(python).toMatch(/^ARG PYTHON_IMAGE=python:3\.\d+-slim/m);
    expect(python.match(/^FROM /gm)?.length).toBe(2);
    expect(python).toMatch(/^USER worker$/m);
    expect(python).toContain('useradd --uid 1000');
  });
});
