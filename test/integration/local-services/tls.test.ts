/**
 * Proves the TLS of the test services is real, for both servers: plaintext is refused, TLS
 * without a client certificate (or with one from another CA) is refused, wrong credentials are
 * refused, and the configuration in `env` (client certificate `api` + credentials) works.
 * Real clients throughout: with TLS 1.3 a missing client certificate is only reported after the
 * handshake, which `openssl s_client` shows as success.
 */
import { readFile } from 'node:fs/promises';
import { connect as tlsConnect } from 'node:tls';
import amqp from 'amqplib';
import { MongoClient, MongoServerError, type MongoClientOptions } from 'mongodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { createCertificateAuthority, issueClientCertificate, type PemPair } from '../../../src/pki/certificates.js';
import { testServices, type TestServices } from '../../support/services.js';

const FAST_FAIL = 2500;
// OpenSSL's alerts as seen by the client: TLS 1.3 reports a missing client certificate after the handshake.
const CERT_REQUIRED = /certificate required/i;
const CERT_REJECTED = /unknown ca|bad certificate|certificate verify failed|decrypt error|alert/i;

let services: TestServices;
let env: Record<string, string>;
let ca: Buffer;
let cert: Buffer;
let key: Buffer;
let foreign: PemPair;

beforeAll(async () => {
  services = testServices();
  env = services.env;
  [ca, cert, key] = await Promise.all([
    readFile(env.BROKER_TLS_CA_FILE as string),
    readFile(env.BROKER_TLS_CERT_FILE as string),
    readFile(env.BROKER_TLS_KEY_FILE as string),
  ]);
  // A well-formed client certificate from a CA the servers don't trust.
  const otherCa = await createCertificateAuthority({ commonName: 'Untrusted CA' });
  foreign = await issueClientCertificate(otherCa, { commonName: 'api' });
});

/** The server's certificate as seen by a verifying TLS client with our client certificate. */
function peerCertificate(port: number): Promise<{ authorized: boolean; subjectCn: string; protocol: string | null }> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({ host: 'localhost', port, servername: 'localhost', ca, cert, key }, () => {
      const peer = socket.getPeerCertificate();
      resolve({ authorized: socket.authorized, subjectCn: String(peer.subject?.CN), protocol: socket.getProtocol() });
      socket.destroy();
    });
    socket.once('error', reject);
  });
}

describe('MongoDB-wire server', () => {
  const uri = (): string => env.MONGO_URI as string;
  const base = (): MongoClientOptions => ({ directConnection: true, serverSelectionTimeoutMS: FAST_FAIL, connectTimeoutMS: FAST_FAIL });
  const credentials = (): MongoClientOptions => ({
    auth: { username: env.MONGO_USERNAME as string, password: env.MONGO_PASSWORD as string },
    authSource: env.MONGO_AUTH_SOURCE as string,
  });
  const withTlsClientCert = (): MongoClientOptions => ({
    tls: true,
    tlsCAFile: env.MONGO_TLS_CA_FILE as string,
    tlsCertificateKeyFile: env.MONGO_TLS_CERT_KEY_FILE as string,
  });

  async function use<T>(options: MongoClientOptions, fn: (client: MongoClient) => Promise<T>): Promise<T> {
    const client = new MongoClient(uri(), { ...base(), ...options });
    try {
      return await fn(client);
    } finally {
      await client.close();
    }
  }
  const ping = (client: MongoClient): Promise<unknown> => client.db('admin').command({ ping: 1 });

  it('serves a certificate from our CA over TLS 1.2+', async () => {
    const peer = await peerCertificate(services.mongo.port);
    expect(peer.authorized).toBe(true);
    expect(peer.subjectCn).toBe('cybercom-ts services');
    expect(['TLSv1.2', 'TLSv1.3']).toContain(peer.protocol);
  });

  it('refuses plaintext connections', async () => {
    await expect(use({ ...credentials() }, ping)).rejects.toThrow(/closed|ECONNRESET/);
  });

  it('refuses TLS without a client certificate', async () => {
    await expect(use({ ...credentials(), tls: true, tlsCAFile: env.MONGO_TLS_CA_FILE }, ping)).rejects.toThrow(CERT_REQUIRED);
  });

  it('refuses a client certificate from another CA', async () => {
    await expect(
      use({ ...credentials(), tls: true, tlsCAFile: env.MONGO_TLS_CA_FILE, cert: foreign.certPem, key: foreign.keyPem }, ping),
    ).rejects.toThrow(CERT_REJECTED);
  });

  it('accepts the client certificate with the credentials: ping, write and read as the configured user', async () => {
    const result = await use({ ...withTlsClientCert(), ...credentials() }, async (client) => {
      const pong = await ping(client);
      const status = await client.db('admin').command({ connectionStatus: 1 });
      const collection = client.db('tls_test').collection<{ _id: string; n: number }>('probe');
      await collection.deleteMany({});
      await collection.insertOne({ _id: 'a', n: 1 });
      const found = await collection.findOne({ _id: 'a' });
      await client.db('tls_test').dropDatabase();
      return { pong, users: status.authInfo?.authenticatedUsers as Array<{ user: string; db: string }>, found };
    });
    expect(result.pong).toMatchObject({ ok: 1 });
    // mongod names the user's database; FerretDB v2 reports the user alone.
    expect(result.users).toHaveLength(1);
    expect(result.users[0]?.user).toBe(env.MONGO_USERNAME);
    if (result.users[0]?.db !== undefined) expect(result.users[0].db).toBe(env.MONGO_AUTH_SOURCE);
    expect(result.found).toEqual({ _id: 'a', n: 1 });
  });

  it('refuses wrong credentials, and data access without credentials', async () => {
    const wrong = use(
      { ...withTlsClientCert(), ...credentials(), auth: { username: env.MONGO_USERNAME as string, password: 'wrong-password' } },
      ping,
    );
    await expect(wrong).rejects.toSatisfy((err) => err instanceof MongoServerError && err.code === 18); // AuthenticationFailed
    const anonymous = use(withTlsClientCert(), (client) => client.db('tls_test').collection('probe').insertOne({ n: 1 }));
    await expect(anonymous).rejects.toSatisfy((err) => err instanceof MongoServerError && err.code === 13); // Unauthorized
  });
});

describe('RabbitMQ', () => {
  const url = (): URL => new URL(env.BROKER_URL as string);
  const login = (username = env.BROKER_USERNAME as string, password = env.BROKER_PASSWORD as string): amqp.Options.Connect => ({
    protocol: 'amqps',
    hostname: url().hostname,
    port: Number(url().port),
    vhost: decodeURIComponent(url().pathname.slice(1)),
    username,
    password,
    heartbeat: 0,
  });

  async function open(connectTo: amqp.Options.Connect, socket: Record<string, unknown>): Promise<amqp.ChannelModel> {
    return amqp.connect(connectTo, { timeout: FAST_FAIL, servername: 'localhost', ...socket });
  }

  it('serves a certificate from our CA over TLS 1.2+', async () => {
    const peer = await peerCertificate(services.broker.port);
    expect(peer.authorized).toBe(true);
    expect(peer.subjectCn).toBe('cybercom-ts services');
    expect(['TLSv1.2', 'TLSv1.3']).toContain(peer.protocol);
  });

  it('has no plaintext AMQP: amqp:// to the TLS port is refused', async () => {
    await expect(open({ ...login(), protocol: 'amqp' }, {})).rejects.toThrow(/ECONNRESET|closed|socket/i);
  });

  it('refuses TLS without a client certificate', async () => {
    await expect(open(login(), { ca: [ca] })).rejects.toThrow(CERT_REQUIRED);
  });

  it('refuses a client certificate from another CA', async () => {
    await expect(open(login(), { ca: [ca], cert: foreign.certPem, key: foreign.keyPem })).rejects.toThrow(CERT_REJECTED);
  });

  it('accepts the client certificate with the credentials: open a channel and declare a queue', async () => {
    const connection = await open(login(), { ca: [ca], cert, key });
    try {
      const channel = await connection.createChannel();
      const queue = await channel.assertQueue('', { exclusive: true, autoDelete: true });
      expect(queue.queue).toMatch(/^amq\.gen-/);
      expect(channel.sendToQueue(queue.queue, Buffer.from('ping'))).toBe(true);
      const message = await (async () => {
        for (let i = 0; i < 50; i++) {
          const m = await channel.get(queue.queue, { noAck: true });
          if (m) return m;
          await new Promise((r) => setTimeout(r, 20));
        }
        return false;
      })();
      expect(message && message.content.toString()).toBe('ping');
      await channel.close();
    } finally {
      await connection.close();
    }
  });

  it('refuses wrong credentials', async () => {
    await expect(open(login(env.BROKER_USERNAME, 'wrong-password'), { ca: [ca], cert, key })).rejects.toThrow(/ACCESS.REFUSED/);
  });
});
