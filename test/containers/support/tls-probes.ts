/**
 * What a client outside the containers sees on the published broker and database ports: a real
 * AMQP / MongoDB session with the right client certificate works; without one, with one from
 * another CA, or without TLS at all, the server refuses. Each refusal probe also fails when the
 * server answers in plaintext, so "refused" cannot be a misconfigured port that says nothing.
 */
import { connect as netConnect } from 'node:net';
import amqp from 'amqplib';
import { MongoClient } from 'mongodb';

export interface ClientTls {
  /** CA that signed the server certificate. */
  ca: string;
  /** Client certificate and key (PEM); omit both to connect without one. */
  cert?: string;
  key?: string;
}

export interface Endpoint {
  host: string;
  port: number;
  /** Host name the server certificate is checked against (SNI + hostname verification). */
  servername?: string;
}

const TIMEOUT_MS = 10_000;

export async function amqpSession(ep: Endpoint, user: string, password: string, vhost: string, tls: ClientTls): Promise<void> {
  const url = `amqps://${encodeURIComponent(user)}:${encodeURIComponent(password)}@${ep.host}:${ep.port}/${encodeURIComponent(vhost)}`;
  const conn = await amqp.connect(url, {
    ca: [tls.ca],
    ...(tls.cert ? { cert: tls.cert, key: tls.key } : {}),
    servername: ep.servername ?? ep.host,
    timeout: TIMEOUT_MS,
  });
  try {
    const ch = await conn.createChannel();
    await ch.checkQueue('amq.rabbitmq.reply-to').catch(() => undefined);
    await ch.close();
  } finally {
    await conn.close().catch(() => undefined);
  }
}

/**
 * The driver retries a failed handshake until server selection times out, so a refusal takes
 * `timeoutMs`: probes that expect one pass a short timeout.
 */
export async function mongoSession(ep: Endpoint, user: string, password: string, tls: ClientTls, timeoutMs = TIMEOUT_MS): Promise<void> {
  const client = new MongoClient(`mongodb://${ep.host}:${ep.port}/?authSource=admin`, {
    tls: true,
    ca: tls.ca,
    ...(tls.cert ? { cert: tls.cert, key: tls.key } : {}),
    ...(ep.servername ? { servername: ep.servername } : {}),
    auth: { username: user, password },
    directConnection: true,
    serverSelectionTimeoutMS: timeoutMs,
    connectTimeoutMS: timeoutMs,
  });
  try {
    await client.connect();
    await client.db('admin').command({ ping: 1 });
  } finally {
    await client.close().catch(() => undefined);
  }
}

/** Resolves with the error when `attempt` fails; throws when it succeeds. */
export async function expectRefused(what: string, attempt: () => Promise<unknown>): Promise<Error> {
  try {
    await attempt();
  } catch (err) {
    return err instanceof Error ? err : new Error(String(err));
  }
  throw new Error(`${what}: the server accepted the session`);
}

/**
 * Speaks plaintext to a TLS-only port: sends `hello` and collects whatever comes back until the
 * server closes (or a timeout). A TLS server answers a non-TLS hello with at most a TLS alert
 * record (first byte 0x15) or nothing; the AMQP protocol header or a MongoDB reply would come back
 * as plaintext. Resolves with the bytes received.
 */
export function plaintextExchange(ep: Endpoint, hello: Buffer, waitMs = 3000): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = netConnect({ host: ep.host, port: ep.port });
    // A TLS server may just wait for a handshake that never comes: silence also counts.
    const timer = setTimeout(() => socket.destroy(), waitMs);
    socket.on('connect', () => socket.write(hello));
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', (err) => {
      // A reset after the server's refusal is still a refusal; a failure to connect is not.
      if (chunks.length > 0 || (err as NodeJS.ErrnoException).code === 'ECONNRESET') return;
      clearTimeout(timer);
      reject(err);
    });
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks));
    });
  });
}

/** AMQP 0-9-1 protocol header, what a plaintext AMQP client sends first. */
export const AMQP_HEADER = Buffer.from('AMQP\x00\x00\x09\x01', 'latin1');

/** A MongoDB OP_MSG `hello` command, what a plaintext MongoDB client sends first. */
export function mongoHelloMessage(): Buffer {
  // Body: BSON { hello: 1, $db: "admin" }
  const doc = Buffer.concat([
    Buffer.from([0x10]),
    Buffer.from('hello\0'),
    int32(1),
    Buffer.from([0x02]),
    Buffer.from('$db\0'),
    int32(6),
    Buffer.from('admin\0'),
    Buffer.from([0x00]),
  ]);
  const bson = Buffer.concat([int32(doc.length + 4), doc]);
  const body = Buffer.concat([int32(0) /* flagBits */, Buffer.from([0]) /* kind 0 */, bson]);
  const header = Buffer.concat([int32(16 + body.length), int32(1), int32(0), int32(2013)]);
  return Buffer.concat([header, body]);
}

function int32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeInt32LE(n);
  return b;
}

/** True when the bytes can only be a plaintext protocol answer (not empty, not a TLS record). */
export function isPlaintextAnswer(bytes: Buffer): boolean {
  if (bytes.length === 0) return false;
  const first = bytes[0];
  // TLS record content types: 0x14 change_cipher_spec, 0x15 alert, 0x16 handshake, 0x17 data.
  return !(first !== undefined && first >= 0x14 && first <= 0x17 && bytes[1] === 0x03);
}
