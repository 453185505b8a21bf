/**
 * The real backing services as local child processes: a TLS-only MongoDB-wire server and a
 * TLS-only RabbitMQ node, both requiring client certificates from a private CA plus credentials.
 * Used by `npm run dev` and by the integration test set-up; `env()` is exactly what the service's
 * configuration reads, so both run the service the way production does.
 */
import { chmod, mkdir, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { ensureCertificates } from './certificate-set.js';
import { ensureCredentials } from './credentials.js';
import { startMongoWire, type MongoWireKind } from './mongo-wire.js';
import { startRabbitMq, type RabbitMqHandle } from './rabbitmq.js';
import { startRabbitMqCluster } from './rabbitmq-cluster.js';

export interface LocalServicesOptions {
  stateDir: string;
  /** Extra name (DNS or IP) for the server certificate, e.g. the host remote workers dial. */
  publicHost?: string;
  /** Keep the certificates in <stateDir>/certs when they are still valid. Default false. */
  reuseCertificates?: boolean;
  /** Validity of issued leaf certificates in days (default 365). */
  validityDays?: number;
  /** Fixed ports instead of free ones (e.g. for a dev set-up other tools point at). */
  ports?: { mongo?: number; broker?: number };
  /**
   * RabbitMQ nodes (default 1). More form one cluster (see ./rabbitmq-cluster.ts): BROKER_URL
   * then lists every node, task queues are quorum queues, and nodes talk to each other over TLS.
   * With a fixed broker port, node i listens on that port + i.
   */
  brokerNodes?: number;
  /** How often the database deletes documents past their TTL, in seconds (default a minute). */
  ttlIntervalSeconds?: number;
}

export interface LocalServices {
  mongo: {
    kind: MongoWireKind;
    uri: string;
    authSource: string;
    username: string;
    password: string;
    caFile: string;
    certKeyFile: string;
    certFile: string;
    keyFile: string;
    port: number;
  };
  broker: {
    url: string;
    username: string;
    password: string;
    vhost: string;
    caFile: string;
    certFile: string;
    keyFile: string;
    port: number;
    /** Every node's address, `;`-separated (one address for a single node). */
    urls: string;
    /** How task queues are declared: quorum on a cluster. */
    queueType: 'classic' | 'quorum';
  };
  /** The nodes of the broker cluster (one for a single node): to stop or kill one in tests. */
  brokerNodes: RabbitMqHandle[];
  certDir: string;
  /** The environment variables the service's configuration reads (client certificate `api`). */
  env(): Record<string, string>;
  stop(): Promise<void>;
}

export async function startLocalServices(opts: LocalServicesOptions): Promise<LocalServices> {
  const stateDir = resolve(opts.stateDir);
  await mkdir(stateDir, { recursive: true });
  // The broker runs as the `rabbitmq` user and must be able to enter the state directory; the
  // secrets inside are protected by their own modes (certs/ 0700, credentials.json 0600).
  await chmod(stateDir, 0o755);
  const certDir = join(stateDir, 'certs');
  const mongoDir = join(stateDir, 'mongo');
  const brokerDir = join(stateDir, 'rabbitmq');

  const { credentials, created } = await ensureCredentials(stateDir);
  if (created) {
    // Users are created once, with the data; data made for other credentials would lock us out.
    await Promise.all([rm(mongoDir, { recursive: true, force: true }), rm(brokerDir, { recursive: true, force: true })]);
  }
  const certs = await ensureCertificates(certDir, {
    publicHost: opts.publicHost,
    reuse: opts.reuseCertificates ?? false,
    validityDays: opts.validityDays,
  });
  const api = certs.clients.api;

  const brokerNodeCount = opts.brokerNodes ?? 1;
  const brokerOptions = {
    caFile: certs.ca.certFile,
    certFile: certs.server.certFile,
    keyFile: certs.server.keyFile,
    clientCertFile: api.certFile,
    clientKeyFile: api.keyFile,
    username: credentials.broker.username,
    password: credentials.broker.password,
    vhost: credentials.broker.vhost,
  };
  const startBroker = async (): Promise<RabbitMqHandle[]> => {
    if (brokerNodeCount === 1) return [await startRabbitMq({ ...brokerOptions, dir: brokerDir, port: opts.ports?.broker })];
    const cluster = await startRabbitMqCluster({
      ...brokerOptions,
      dir: brokerDir,
      nodes: brokerNodeCount,
      basePort: opts.ports?.broker,
      distributionTls: {
        caFile: certs.ca.certFile,
        certFile: certs.server.certFile,
        keyFile: certs.server.keyFile,
        clientCertFile: api.certFile,
        clientKeyFile: api.keyFile,
      },
    });
    return cluster.nodes;
  };

  const [mongoResult, brokerResult] = await Promise.allSettled([
    startMongoWire({
      dir: mongoDir,
      caFile: certs.ca.certFile,
      certFile: certs.server.certFile,
      keyFile: certs.server.keyFile,
      certKeyFile: certs.server.combinedFile,
      clientCertKeyFile: api.combinedFile,
      port: opts.ports?.mongo,
      username: credentials.mongo.username,
      password: credentials.mongo.password,
      ttlIntervalSeconds: opts.ttlIntervalSeconds,
    }),
    startBroker(),
  ]);
  if (mongoResult.status === 'rejected' || brokerResult.status === 'rejected') {
    // Don't leave the one that did start running.
    if (mongoResult.status === 'fulfilled') await mongoResult.value.stop().catch(() => undefined);
    if (brokerResult.status === 'fulfilled') await Promise.all(brokerResult.value.map((n) => n.stop().catch(() => undefined)));
    const errors = [mongoResult, brokerResult]
      .filter((r) => r.status === 'rejected')
      .map((r) => (r as PromiseRejectedResult).reason as unknown);
    if (errors.length === 1) throw errors[0];
    throw new AggregateError(
      errors,
      `local services did not start:\n${errors.map((e) => (e instanceof Error ? e.message : String(e))).join('\n\n')}`,
    );
  }
  const mongoHandle = mongoResult.value;
  const brokerNodes = brokerResult.value;
  const brokerHandle = brokerNodes[0] as RabbitMqHandle;

  const mongo: LocalServices['mongo'] = {
    kind: mongoHandle.kind,
    uri: mongoHandle.uri,
    authSource: mongoHandle.authSource,
    username: credentials.mongo.username,
    password: credentials.mongo.password,
    caFile: certs.ca.certFile,
    certKeyFile: api.combinedFile,
    certFile: api.certFile,
    keyFile: api.keyFile,
    port: mongoHandle.port,
  };
  const broker: LocalServices['broker'] = {
    url: brokerHandle.url,
    username: credentials.broker.username,
    password: credentials.broker.password,
    vhost: credentials.broker.vhost,
    caFile: certs.ca.certFile,
    certFile: api.certFile,
    keyFile: api.keyFile,
    port: brokerHandle.port,
    urls: brokerNodes.map((n) => n.url).join(';'),
    queueType: brokerNodes.length > 1 ? 'quorum' : 'classic',
  };

  let stopping: Promise<void> | undefined;
  return {
    mongo,
    broker,
    brokerNodes,
    certDir,
    env: () => ({
      MONGO_URI: mongo.uri,
      MONGO_USERNAME: mongo.username,
      MONGO_PASSWORD: mongo.password,
      MONGO_AUTH_SOURCE: mongo.authSource,
      MONGO_TLS_CA_FILE: mongo.caFile,
      MONGO_TLS_CERT_KEY_FILE: mongo.certKeyFile,
      BROKER_URL: broker.urls,
      ...(broker.queueType === 'quorum' ? { TASK_QUEUE_TYPE: broker.queueType } : {}),
      BROKER_USERNAME: broker.username,
      BROKER_PASSWORD: broker.password,
      BROKER_TLS_CA_FILE: broker.caFile,
      BROKER_TLS_CERT_FILE: broker.certFile,
      BROKER_TLS_KEY_FILE: broker.keyFile,
    }),
    stop: () => (stopping ??= Promise.all([mongoHandle.stop(), ...brokerNodes.map((n) => n.stop())]).then(() => undefined)),
  };
}
