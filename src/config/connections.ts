/**
 * Connection settings for the two back-end services, shared by the API server and the worker:
 * both read the same MONGO_* and BROKER_* variables, so an operator configures TLS once.
 */
import { z } from 'zod';

const nonEmpty = z.string().trim().min(1);

/** MONGO_OPERATION_TIMEOUT_MS when unset. */
export const DEFAULT_OPERATION_TIMEOUT_MS = 20_000;

export const mongoEnvSchema = z.object({
  MONGO_URI: nonEmpty.refine((v) => /^mongodb(\+srv)?:\/\//.test(v), 'must start with mongodb:// or mongodb+srv://'),
  MONGO_USERNAME: nonEmpty.optional(),
  MONGO_PASSWORD: nonEmpty.optional(),
  MONGO_AUTH_SOURCE: nonEmpty.default('admin'),
  /** CA that signed the database's server certificate. Setting it turns TLS on. */
  MONGO_TLS_CA_FILE: nonEmpty.optional(),
  /** One PEM file holding the client certificate and its key (what mongod and the driver expect). */
  MONGO_TLS_CERT_KEY_FILE: nonEmpty.optional(),
  /** Server-side limit for one query, so a runaway query ends as a clean error instead of a hung request. */
  MONGO_QUERY_TIME_LIMIT_MS: z.coerce.number().int().positive().default(30_000),
  /**
   * How long a request waits for any other database operation (a write, a look-up) before it is
   * answered 503: an engine that stops answering must not hold requests for ever.
   */
  MONGO_OPERATION_TIMEOUT_MS: z.coerce.number().int().min(100).default(DEFAULT_OPERATION_TIMEOUT_MS),
});

/**
 * The service's private database (users, groups, grants, tokens, sessions, login throttle, task
 * history): where no worker's login reaches it. Unset, it is the main connection's database,
 * which is right where the engine enforces roles (MongoDB: the workers' role names only the data
 * store and the result collection). The local runtime's engine has no roles, so there the private
 * data lives on a second engine of its own, reached through PRIVATE_MONGO_URI (a Unix socket).
 */
export const privateMongoEnvSchema = z.object({
  PRIVATE_MONGO_URI: mongoEnvSchema.shape.MONGO_URI.optional(),
  PRIVATE_MONGO_USERNAME: nonEmpty.optional(),
  PRIVATE_MONGO_PASSWORD: nonEmpty.optional(),
  PRIVATE_MONGO_AUTH_SOURCE: nonEmpty.default('admin'),
  PRIVATE_MONGO_TLS_CA_FILE: nonEmpty.optional(),
  PRIVATE_MONGO_TLS_CERT_KEY_FILE: nonEmpty.optional(),
});

/**
 * BROKER_URL is one address or several separated by `;` or `,` (Celery writes
 * `amqps://a;amqps://b`): the nodes of one RabbitMQ cluster, tried in turn.
 */
export function splitBrokerUrls(value: string): string[] {
  return value
    .split(/[;,]/)
    .map((url) => url.trim())
    .filter((url) => url.length > 0);
}

export const TASK_QUEUE_TYPES = ['classic', 'quorum'] as const;
export type TaskQueueType = (typeof TASK_QUEUE_TYPES)[number];

export const brokerEnvSchema = z.object({
  BROKER_URL: nonEmpty.refine(
    (v) => splitBrokerUrls(v).length > 0 && splitBrokerUrls(v).every((url) => /^amqps?:\/\//.test(url)),
    'must be amqps:// addresses separated by ; (or amqp:// for a plaintext test broker)',
  ),
  BROKER_USERNAME: nonEmpty.optional(),
  BROKER_PASSWORD: nonEmpty.optional(),
  BROKER_TLS_CA_FILE: nonEmpty.optional(),
  BROKER_TLS_CERT_FILE: nonEmpty.optional(),
  BROKER_TLS_KEY_FILE: nonEmpty.optional(),
  /** AMQP heartbeat in seconds; lets both sides notice a dead TCP connection. */
  BROKER_HEARTBEAT_S: z.coerce.number().int().min(0).default(30),
  /**
   * How task queues (and the dead-letter queue) are declared: `classic`, or `quorum` (replicated
   * on a cluster). Every consumer of a queue must declare it the same way, Python workers too.
   */
  TASK_QUEUE_TYPE: z.enum(TASK_QUEUE_TYPES).optional(),
});

export interface MongoSettings {
  uri: string;
  username?: string;
  password?: string;
  authSource: string;
  tlsCaFile?: string;
  tlsCertKeyFile?: string;
  queryTimeLimitMs: number;
  /** The deadline of one database operation that no query time limit bounds (see db/deadline.ts). */
  operationTimeoutMs: number;
}

export interface BrokerSettings {
  /** The first address; the connection tries it first. */
  url: string;
  /** Further nodes of the same cluster, tried in turn when the one in use cannot be reached. */
  alternateUrls?: string[];
  /** Default classic. */
  queueType?: TaskQueueType;
  username?: string;
  password?: string;
  tlsCaFile?: string;
  tlsCertFile?: string;
  tlsKeyFile?: string;
  heartbeatSeconds: number;
}

export function toMongoSettings(env: z.infer<typeof mongoEnvSchema>): MongoSettings {
  return {
    uri: env.MONGO_URI,
    username: env.MONGO_USERNAME,
    password: env.MONGO_PASSWORD,
    authSource: env.MONGO_AUTH_SOURCE,
    tlsCaFile: env.MONGO_TLS_CA_FILE,
    tlsCertKeyFile: env.MONGO_TLS_CERT_KEY_FILE,
    queryTimeLimitMs: env.MONGO_QUERY_TIME_LIMIT_MS,
    operationTimeoutMs: env.MONGO_OPERATION_TIMEOUT_MS,
  };
}

/** The private database's connection: its own when PRIVATE_MONGO_URI is set, else the main one. */
export function toPrivateMongoSettings(env: z.infer<typeof privateMongoEnvSchema>, main: MongoSettings): MongoSettings {
  if (env.PRIVATE_MONGO_URI === undefined) return main;
  return {
    uri: env.PRIVATE_MONGO_URI,
    username: env.PRIVATE_MONGO_USERNAME,
    password: env.PRIVATE_MONGO_PASSWORD,
    authSource: env.PRIVATE_MONGO_AUTH_SOURCE,
    tlsCaFile: env.PRIVATE_MONGO_TLS_CA_FILE,
    tlsCertKeyFile: env.PRIVATE_MONGO_TLS_CERT_KEY_FILE,
    queryTimeLimitMs: main.queryTimeLimitMs,
    operationTimeoutMs: main.operationTimeoutMs,
  };
}

export function toBrokerSettings(env: z.infer<typeof brokerEnvSchema>): BrokerSettings {
  const [url = env.BROKER_URL, ...alternateUrls] = splitBrokerUrls(env.BROKER_URL);
  return {
    url,
    alternateUrls,
    queueType: env.TASK_QUEUE_TYPE ?? 'classic',
    username: env.BROKER_USERNAME,
    password: env.BROKER_PASSWORD,
    tlsCaFile: env.BROKER_TLS_CA_FILE,
    tlsCertFile: env.BROKER_TLS_CERT_FILE,
    tlsKeyFile: env.BROKER_TLS_KEY_FILE,
    heartbeatSeconds: env.BROKER_HEARTBEAT_S,
  };
}
