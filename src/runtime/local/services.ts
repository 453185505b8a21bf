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
import { startMongoWire, type MongoWireHandle, type MongoWireKind } from './mongo-wire.js';
import { startRabbitMq, type RabbitMqHandle } from './rabbitmq.js';

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
  };
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
    }),
    startRabbitMq({
      dir: brokerDir,
      caFile: certs.ca.certFile,
      certFile: certs.server.certFile,
      keyFile: certs.server.keyFile,
      clientCertFile: api.certFile,
      clientKeyFile: api.keyFile,
      port: opts.ports?.broker,
      username: credentials.broker.username,
      password: credentials.broker.password,
      vhost: credentials.broker.vhost,
    }),
  ]);
  if (mongoResult.status === 'rejected' || brokerResult.status === 'rejected') {
    // Don't leave the one that did start running.
    const started = [mongoResult, brokerResult].filter((r) => r.status === 'fulfilled') as Array<PromiseFulfilledResult<MongoWireHandle | RabbitMqHandle>>;
    await Promise.all(started.map((r) => r.value.stop().catch(() => undefined)));
    const errors = [mongoResult, brokerResult].filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason as unknown);
    if (errors.length === 1) throw errors[0];
    throw new AggregateError(errors, `local services did not start:\n${errors.map((e) => (e instanceof Error ? e.message : String(e))).join('\n\n')}`);
  }
  const mongoHandle = mongoResult.value;
  const brokerHandle = brokerResult.value;

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
  };

  let stopping: Promise<void> | undefined;
  return {
    mongo,
    broker,
    certDir,
    env: () => ({
      MONGO_URI: mongo.uri,
      MONGO_USERNAME: mongo.username,
      MONGO_PASSWORD: mongo.password,
      MONGO_AUTH_SOURCE: mongo.authSource,
      MONGO_TLS_CA_FILE: mongo.caFile,
      MONGO_TLS_CERT_KEY_FILE: mongo.certKeyFile,
      BROKER_URL: broker.url,
      BROKER_USERNAME: broker.username,
      BROKER_PASSWORD: broker.password,
      BROKER_TLS_CA_FILE: broker.caFile,
      BROKER_TLS_CERT_FILE: broker.certFile,
      BROKER_TLS_KEY_FILE: broker.keyFile,
    }),
    stop: () =>
      (stopping ??= Promise.all([mongoHandle.stop(), brokerHandle.stop()]).then(() => undefined)),
  };
}
