/**
 * compose.cluster.yaml, the RabbitMQ side: three nodes of the official image with the cluster
 * configuration (client TLS as on a single node, classic-config peer discovery naming every
 * node, Erlang distribution over TLS, one shared cookie), the files the installer writes for
 * them, and clients told about every node with quorum task queues
 * (src/installation/broker-cluster.ts).
 */
import { mkdir, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { brokerEnvSchema, toBrokerSettings } from '../../../src/config/connections.js';
import { BROKER_CLUSTER_NODES, brokerClusterUrl, ensureErlangCookie, erlangCookieFile } from '../../../src/installation/broker-cluster.js';
import { CERTIFICATE_SPECS, ensureCertificates, serverNames } from '../../../src/installation/certificates.js';
import { writeComposeServiceFiles } from '../../../src/installation/compose-files.js';
import { serviceEnv, workerEnv } from '../../../src/installation/env-files.js';
import { installLayout } from '../../../src/installation/layout.js';
import { CLUSTER_COMPOSE_FILE } from '../../../src/installation/replica-set.js';
import { composeInstallConfig, TEST_SECRETS } from '../../support/install-fixtures.js';

const repo = join(__dirname, '..', '..', '..');
const read = (file: string): string => readFileSync(join(repo, file), 'utf8');

interface Service {
  image?: string;
  hostname?: string;
  ports?: string[];
  healthcheck?: { test: string[] | string };
  depends_on?: Record<string, { condition: string }>;
  environment?: Record<string, string>;
  restart?: string;
  volumes?: string[];
  security_opt?: string[];
}

const overlay = parse(read(CLUSTER_COMPOSE_FILE), { merge: true }) as {
  services: Record<string, Service>;
  volumes: Record<string, unknown>;
};
const base = parse(read('compose.yaml'), { merge: true }) as { services: Record<string, Service>; volumes: Record<string, unknown> };
const services = overlay.services;
const RABBITMQ_FILES = '${CYBERCOM_DIR:?run ./installer first}/compose/rabbitmq:/run/cybercom/rabbitmq:ro';
const COOKIE = '${CYBERCOM_DIR:?run ./installer first}/compose/rabbitmq/erlang-cookie:/var/lib/rabbitmq/.erlang.cookie:ro';
const CLUSTER_CONF = './docker/rabbitmq.cluster.conf:/etc/rabbitmq/rabbitmq.conf:ro';
const DIST_TLS = './docker/rabbitmq-inter-node-tls.config:/etc/rabbitmq/inter-node-tls.config:ro';
const DIST_ARGS = '-proto_dist inet_tls -ssl_dist_optfile /etc/rabbitmq/inter-node-tls.config';

/** Non-comment lines of a rabbitmq.conf. */
const settingLines = (text: string): string[] => text.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('#'));

describe('compose.cluster.yaml (RabbitMQ cluster)', () => {
  const others = BROKER_CLUSTER_NODES.filter((n) => n !== 'rabbitmq');

  it('adds the other nodes from the same image, named by their host names, with their own data and no published port', () => {
    expect(others).toEqual(['rabbitmq-2', 'rabbitmq-3']);
    for (const node of others) {
      const s = services[node];
      expect(s, node).toBeDefined();
      expect(s?.image).toBe(base.services.rabbitmq?.image);
      expect(s?.hostname).toBe(node);
      expect(s?.ports, node).toBeUndefined();
      expect(s?.volumes).toEqual([
        `${node}-data:/var/lib/rabbitmq`,
        CLUSTER_CONF,
        './docker/rabbitmq-enabled-plugins:/etc/rabbitmq/enabled_plugins:ro',
        DIST_TLS,
        RABBITMQ_FILES,
        COOKIE,
      ]);
      expect(Object.keys(overlay.volumes)).toContain(`${node}-data`);
      expect(s?.healthcheck?.test).toEqual(base.services.rabbitmq?.healthcheck?.test);
      expect(s?.restart).toBe('unless-stopped');
      expect(s?.security_opt).toEqual(['no-new-privileges:true']);
      // They join the cluster the first node forms.
      expect(s?.depends_on).toEqual({ rabbitmq: { condition: 'service_healthy' } });
    }
  });

  it('switches the first node to the cluster configuration by the same container paths compose.yaml mounts', () => {
    expect(base.services.rabbitmq?.hostname).toBe('rabbitmq');
    expect(base.services.rabbitmq?.volumes).toContain('./docker/rabbitmq.conf:/etc/rabbitmq/rabbitmq.conf:ro');
    expect(base.services.rabbitmq?.volumes).toContain(RABBITMQ_FILES);
    expect(services.rabbitmq?.volumes).toEqual([CLUSTER_CONF, DIST_TLS, COOKIE]);
  });

  it('speaks Erlang distribution over TLS only, the node and its CLI tools alike', () => {
    for (const node of BROKER_CLUSTER_NODES) {
      expect(services[node]?.environment, node).toEqual({
        RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS: DIST_ARGS,
        RABBITMQ_CTL_ERL_ARGS: DIST_ARGS,
      });
    }
    const dist = read('docker/rabbitmq-inter-node-tls.config');
    const side = (name: string): string => new RegExp(`\\{${name}, \\[([^\\]]*)\\]\\}`).exec(dist)?.[1] ?? '';
    // Accepting: the server certificate; dialling nodes need a client certificate of the client CA.
    expect(side('server')).toContain('{cacertfile, "/run/cybercom/rabbitmq/client-ca.pem"}');
    expect(side('server')).toContain('{certfile, "/run/cybercom/rabbitmq/server.pem"}');
    expect(side('server')).toContain('{verify, verify_peer}');
    expect(side('server')).toContain('{fail_if_no_peer_cert, true}');
    // Dialling: a client certificate, and the other node verified against the server CA.
    expect(side('client')).toContain('{cacertfile, "/run/cybercom/rabbitmq/server-ca.pem"}');
    expect(side('client')).toContain('{certfile, "/run/cybercom/rabbitmq/node-client.pem"}');
    expect(side('client')).toContain('{verify, verify_peer}');
    expect(dist).not.toContain('verify_none');
  });

  it('configures every node like the single node plus classic-config discovery of all three', () => {
    const single = settingLines(read('docker/rabbitmq.conf'));
    const cluster = settingLines(read('docker/rabbitmq.cluster.conf'));
    expect(cluster.slice(0, single.length)).toEqual(single);
    expect(cluster).toContain('cluster_formation.peer_discovery_backend = classic_config');
    const listed = cluster.filter((l) => l.startsWith('cluster_formation.classic_config.nodes.')).map((l) => l.split(' = ')[1]);
    expect(listed).toEqual(BROKER_CLUSTER_NODES.map((n) => `rabbit@${n}`));
    expect(cluster).toContain('cluster_partition_handling = pause_minority');
  });

  it('starts the API and the worker once every node is healthy', () => {
    for (const client of ['api', 'worker']) {
      for (const node of others)
        expect(services[client]?.depends_on?.[node], `${client} -> ${node}`).toEqual({ condition: 'service_healthy' });
      expect(base.services[client]?.depends_on?.rabbitmq).toEqual({ condition: 'service_healthy' });
    }
  });
});

describe('the installer for the RabbitMQ cluster', () => {
  let dir: string;
  const single = composeInstallConfig();
  const cluster = composeInstallConfig({ topology: 'cluster' });
  const secrets = TEST_SECRETS;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cybercom-broker-cluster-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('tells the API and the worker every node, with quorum task queues; a single node stays classic', () => {
    const layout = installLayout(dir);
    expect(brokerClusterUrl()).toBe('amqps://rabbitmq:5671/cybercom;amqps://rabbitmq-2:5671/cybercom;amqps://rabbitmq-3:5671/cybercom');
    for (const env of [serviceEnv(layout, cluster, secrets), workerEnv(layout, cluster, secrets)]) {
      expect(env.BROKER_URL).toBe(brokerClusterUrl());
      expect(env.TASK_QUEUE_TYPE).toBe('quorum');
      // What the services make of it: the first node first, the others to fail over to.
      const settings = toBrokerSettings(brokerEnvSchema.parse({ BROKER_URL: env.BROKER_URL, TASK_QUEUE_TYPE: env.TASK_QUEUE_TYPE }));
      expect([settings.url, ...(settings.alternateUrls ?? [])]).toEqual(BROKER_CLUSTER_NODES.map((n) => `amqps://${n}:5671/cybercom`));
      expect(settings.queueType).toBe('quorum');
    }
    for (const env of [serviceEnv(layout, single, secrets), workerEnv(layout, single, secrets)]) {
      expect(env.BROKER_URL).toBe('amqps://rabbitmq:5671/cybercom');
      expect(env.TASK_QUEUE_TYPE).toBeUndefined();
    }
  });

  it('names every node in the broker certificate of the cluster topology', () => {
    const spec = CERTIFICATE_SPECS.find((s) => s.name === 'rabbitmq');
    expect(spec).toBeDefined();
    if (!spec) return;
    expect(serverNames(spec, '', 'cluster').dnsNames).toEqual(expect.arrayContaining([...BROKER_CLUSTER_NODES]));
    expect(serverNames(spec, '', 'single').dnsNames).not.toContain('rabbitmq-2');
  });

  it('writes the shared cookie and the inter-node TLS files for a cluster, and removes them for a single node', async () => {
    const layout = installLayout(join(dir, 'install'));
    await mkdir(layout.configDir, { recursive: true });
    // 1024-bit keys: the files' names and modes are checked here, not the keys.
    await ensureCertificates(layout.certsDir, { publicHost: '', validityDays: 365, topology: 'cluster', keyBits: 1024 });
    await writeComposeServiceFiles(layout, cluster, secrets);
    const rabbitmq = join(layout.composeFilesDir, 'rabbitmq');
    const cookie = await readFile(join(rabbitmq, 'erlang-cookie'), 'utf8');
    expect(cookie).toMatch(/^[A-Za-z0-9]{20,255}$/);
    // Erlang refuses a cookie file others may read.
    expect((await stat(join(rabbitmq, 'erlang-cookie'))).mode & 0o077).toBe(0);
    // Every file the inter-node TLS configuration names is written.
    const named = [...read('docker/rabbitmq-inter-node-tls.config').matchAll(/"\/run\/cybercom\/rabbitmq\/([^"]+)"/g)].map(
      (m) => m[1] as string,
    );
    expect(named.length).toBeGreaterThan(4);
    for (const file of named) await expect(stat(join(rabbitmq, file)), file).resolves.toBeDefined();
    // Kept across runs: the nodes of a running cluster must keep agreeing on it.
    await writeComposeServiceFiles(layout, cluster, secrets);
    expect(await readFile(join(rabbitmq, 'erlang-cookie'), 'utf8')).toBe(cookie);
    expect((await ensureErlangCookie(erlangCookieFile(layout))).generated).toBe(false);

    await writeComposeServiceFiles(layout, single, secrets);
    for (const file of ['erlang-cookie', 'server-ca.pem', 'node-client.pem', 'node-client.key']) {
      await expect(stat(join(rabbitmq, file)), file).rejects.toThrow();
    }
  });
});
