/**
 * The service's settings: read from the environment (and an optional env file) once at start-up,
 * validated as a whole so an operator sees every wrong or missing value in one message.
 */
import { existsSync, readFileSync } from 'node:fs';
import { MAX_API_PROCESSES, defaultApiProcesses } from './api-processes.js';
import { resolve } from 'node:path';
import { parseEnv } from 'node:util';
import { z } from 'zod';
import { booleanFlag, commaList, envProblems, setVariables } from './env-values.js';
import {
  brokerEnvSchema,
  mongoEnvSchema,
  privateMongoEnvSchema,
  toBrokerSettings,
  toMongoSettings,
  toPrivateMongoSettings,
  type BrokerSettings,
  type MongoSettings,
} from './connections.js';
import { WORKER_ROLE } from './database-roles.js';
import { allowListEntryProblem } from './ip-allowlist.js';
import { trustProxySetting, type TrustProxy } from './trusted-proxy.js';

const positiveInt = z.coerce.number().int().positive();

export const serviceEnvSchema = z
  .object({
    SECRET_KEY: z.string().min(32, 'must be at least 32 characters (generate one with `openssl rand -hex 32`)'),
    ALLOWED_HOSTS: commaList.default(['localhost', '127.0.0.1', '[::1]']),
    DEBUG: booleanFlag.default(false),
    HTTP_HOST: z.string().trim().min(1).default('0.0.0.0'),
    HTTP_PORT: z.coerce.number().int().min(0).max(65535).default(8080),
    /** API processes sharing HTTP_PORT (node:cluster; 1 = this process serves alone). */
    API_PROCESSES: z.coerce.number().int().min(1).max(MAX_API_PROCESSES).default(defaultApiProcesses),
    /** Whose X-Forwarded-* to believe: false, true (the peer is one proxy hop), or proxy addresses (trusted-proxy.ts). */
    TRUST_PROXY: trustProxySetting.default(false),
    /** Serve HTTPS on HTTP_PORT with this certificate (full chain) and key: the API without a proxy. */
    HTTPS_CERT_FILE: z.string().trim().min(1).optional(),
    HTTPS_KEY_FILE: z.string().trim().min(1).optional(),
    /** With HTTPS: a plain-HTTP port that only redirects to HTTPS (e.g. 80). */
    HTTP_REDIRECT_PORT: z.coerce.number().int().min(1).max(65535).optional(),
    SERVICE_DATABASE: z.string().trim().min(1).default('cybercom'),
    DATA_STORE_ANONYMOUS: booleanFlag.default(false),
    CATALOG_ANONYMOUS: booleanFlag.default(false),
    SAFE_METHOD_PERM_REQUIRED: commaList.default([]),
    CATALOG_DATABASES: commaList.default(['catalog']),
    APPLICATION_TITLE: z.string().trim().min(1).default('Cybercommons'),
    MAX_BODY_BYTES: positiveInt.default(16 * 1024 * 1024),
    MAX_QUERY_BYTES: positiveInt.default(64 * 1024),
    /** The explorer map's base tiles, a {z}/{x}/{y} URL template; unset: the map draws on a blank background. */
    EXPLORER_TILE_URL: z
      .string()
      .trim()
      .regex(
        /^https?:\/\/[^/?#\s{}]+\/\S*\{z\}\S*$/,
        'must be an http(s) URL template with {z}, {x} and {y} in its path and one fixed host (no {s})',
      )
      .optional(),
    /** The tiles' attribution, shown as text in the map's corner (most tile services require one). */
    EXPLORER_TILE_ATTRIBUTION: z.string().trim().default(''),
    /** Records whose geometry the explorer map draws at most (the first this many matching the view). */
    EXPLORER_MAP_LIMIT: positiveInt.max(100_000).default(20_000),
    DEFAULT_PAGE_SIZE: positiveInt.default(10),
    /** Aggregations, distinct and scanning queries one caller may run at a time (more: 429). */
    HEAVY_QUERIES_PER_USER: positiveInt.default(2),
    /** The same for all callers together (more: 503), so a few callers cannot saturate the engine. */
    HEAVY_QUERIES_TOTAL: positiveInt.default(4),
    /** Whole-result reads and exports (page_size=0, or pages too large for one batch) one caller may stream at a time (more: 429). */
    STREAMED_READS_PER_USER: positiveInt.default(4),
    /** A streamed response whose client takes nothing more for this long is aborted, its cursor closed. */
    STREAM_SEND_TIMEOUT_S: positiveInt.default(30),
    SESSION_MAX_AGE_S: positiveInt.default(14 * 24 * 3600),
    /**
     * How long an API process reuses what it loaded about an account (its grants, its tokens) or
     * a collection's existence before asking the database again. A change made through the API (a
     * grant, a password, a drop) is answered once no process may still use an older copy: up to
     * this long plus a 250 ms margin. Shorter: changes are answered sooner, more database reads.
     */
    SHARED_CACHE_MS: z.coerce.number().int().min(100).max(60_000).default(2_000),
    JWT_ACCESS_TTL_S: positiveInt.default(300),
    JWT_REFRESH_TTL_S: positiveInt.default(24 * 3600),
    /**
     * Free failed logins within LOGIN_WINDOW_S for one account from one client address on an unknown
     * device (growing delays after them), and for one device cookie (no longer trusted after them).
     */
    LOGIN_MAX_FAILURES: positiveInt.default(5),
    /** For one account from all addresses together on unknown devices (default: 4 × LOGIN_MAX_FAILURES). */
    LOGIN_ACCOUNT_MAX_FAILURES: positiveInt.optional(),
    /** From one address over all accounts, so spraying many names is slowed too (default: 20 × LOGIN_MAX_FAILURES). */
    LOGIN_ADDRESS_MAX_FAILURES: positiveInt.optional(),
    LOGIN_WINDOW_S: positiveInt.default(900),
    TASK_WAIT_MAX_S: positiveInt.default(300),
    TASK_LIST_CACHE_S: z.coerce.number().min(0).default(5),
    /** How long a task-list broadcast gathers worker replies (Celery's CLI waits 1 s). */
    TASK_LIST_REPLY_TIMEOUT_MS: z.coerce.number().int().min(50).max(60_000).default(1_000),
    RESULT_COLLECTION: z.string().trim().min(1).default('tombstone'),
    /** Whether this API process runs the scheduler (every process may: each fire is claimed once). */
    SCHEDULER_ENABLED: booleanFlag.default(true),
    /** How often the scheduler looks for due schedules. */
    SCHEDULE_TICK_MS: z.coerce.number().int().min(20).max(60_000).default(250),
    /** The shortest interval a schedule may have. */
    SCHEDULE_MIN_INTERVAL_S: positiveInt.default(10),
    /** How long a claimed fire is held before another API process may take it over (its claimant having died). */
    SCHEDULE_CLAIM_LEASE_S: positiveInt.max(3600).default(30),
    /** How late a fire may be and still count as on time (later ones are caught up or missed). */
    SCHEDULE_GRACE_S: positiveInt.max(3600).default(10),
    /** The workers' MongoDB role the API adds data-store databases to (empty: leave roles alone). */
    WORKER_DB_ROLE: z.string().trim().default(WORKER_ROLE),
    /** Where the admin site's component bundle is built (must be writable unless pre-built). */
    ADMIN_BUNDLE_DIR: z.string().trim().min(1).default('.cache/adminjs'),
    /**
     * Where the admin site's pages are made: `separate`, in a process of its own started on the
     * first admin page and stopped when idle (AdminJS's code then leaves the API's memory), or
     * `inline`, in the API process (held for the process's life once loaded).
     */
    ADMIN_PROCESS: z.enum(['separate', 'inline']).default('separate'),
    /** A separate admin process stops after this long without an admin page request. */
    ADMIN_IDLE_EXIT_S: positiveInt.max(86_400).default(600),
    /** Where the researchers' Python client wheel is found (its `python/` folder), served at /api/client/. */
    CLIENT_DOWNLOADS_DIR: z.string().trim().min(1).default('.cache/client'),
    /** Where the manual's built site is found (ops/build-manual.sh), served at /api/manual/. */
    MANUAL_DIR: z.string().trim().min(1).default('.cache/manual'),
    /** Prometheus metrics at /api/metrics and the request timing they need; off saves that cost. */
    METRICS_ENABLED: booleanFlag.default(true),
    /** Client addresses or CIDR blocks that may read /api/metrics without credentials. */
    METRICS_ALLOWED_IPS: commaList.default([]),
    /** Workers the metrics and the Operations page keep track of at most (the oldest offline go first). */
    WORKERS_TRACKED_MAX: positiveInt.default(1000),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  })
  .merge(mongoEnvSchema)
  .merge(privateMongoEnvSchema)
  .merge(brokerEnvSchema.partial().extend({ BROKER_HEARTBEAT_S: brokerEnvSchema.shape.BROKER_HEARTBEAT_S }));

export interface Settings {
  secretKey: string;
  allowedHosts: string[];
  debug: boolean;
  httpHost: string;
  httpPort: number;
  /** How many API processes `serve` runs on the one port. */
  apiProcesses: number;
  /** Whose X-Forwarded-* is believed: nobody's, the peer's (one hop), or these proxies' (trusted-proxy.ts). */
  trustProxy: TrustProxy;
  /** Certificate and key files when the API itself serves HTTPS. */
  https: { certFile: string; keyFile: string; redirectPort: number | undefined } | undefined;
  serviceDatabase: string;
  dataStoreAnonymous: boolean;
  catalogAnonymous: boolean;
  /** `db_col` pairs that need the `safe` permission even when anonymous reads are on. */
  safeMethodPermRequired: string[];
  catalogDatabases: string[];
  applicationTitle: string;
  maxBodyBytes: number;
  maxQueryBytes: number;
  /** The explorer map: its base tiles' URL template and attribution, and how many records it draws at most. */
  explorerMap: { tileUrl: string | undefined; tileAttribution: string; limit: number };
  defaultPageSize: number;
  heavyQueriesPerUser: number;
  heavyQueriesTotal: number;
  streamedReadsPerUser: number;
  streamSendTimeoutSeconds: number;
  sessionMaxAgeSeconds: number;
  /** SHARED_CACHE_MS: how long accounts and collections seen to exist are reused before the database is asked again. */
  sharedCacheMs: number;
  jwtAccessTtlSeconds: number;
  jwtRefreshTtlSeconds: number;
  loginMaxFailures: number;
  loginAccountMaxFailures: number;
  loginAddressMaxFailures: number;
  loginWindowSeconds: number;
  taskWaitMaxSeconds: number;
  taskListCacheSeconds: number;
  taskListReplyTimeoutMs: number;
  resultCollection: string;
  /** The scheduler: on in this process or not, its tick, the shortest interval, the claim lease and the on-time grace. */
  scheduler: { enabled: boolean; tickMs: number; minIntervalSeconds: number; claimLeaseMs: number; graceMs: number };
  workerDbRole: string;
  logLevel: string;
  adminBundleDir: string;
  /** Where the admin site's pages are made, and how long a separate admin process may sit idle. */
  adminProcess: { mode: 'separate' | 'inline'; idleExitMs: number };
  clientDownloadsDir: string;
  /** The manual's site, built for the path /api/manual/. */
  manualDir: string;
  /** /api/metrics: whether metrics are gathered at all, and who may read them without a login. */
  metrics: { enabled: boolean; allowedIps: string[] };
  /** Workers tracked at most from their events, per API process. */
  workersTrackedMax: number;
  /** The engine of the data store, the catalog and the task results (what the workers reach too). */
  mongo: MongoSettings;
  /**
   * The service's own data (SERVICE_DATABASE there, but for the task results): the same object as
   * `mongo` unless PRIVATE_MONGO_URI names a store of its own (see config/connections.ts).
   */
  privateMongo: MongoSettings;
  /** Absent when no broker is configured: the queue endpoints then answer 503. */
  broker: BrokerSettings | undefined;
}

export class ConfigError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

/** Validate an environment map. Throws ConfigError listing every problem. */
export function loadSettings(env: Record<string, string | undefined>): Settings {
  const parsed = serviceEnvSchema.safeParse(setVariables(env));
  if (!parsed.success) throw new ConfigError(envProblems(parsed.error));
  const e = parsed.data;
  const problems: string[] = [];
  if ((e.MONGO_USERNAME === undefined) !== (e.MONGO_PASSWORD === undefined)) {
    problems.push('MONGO_USERNAME and MONGO_PASSWORD must be set together');
  }
  if (e.MONGO_TLS_CERT_KEY_FILE !== undefined && e.MONGO_TLS_CA_FILE === undefined) {
    problems.push('MONGO_TLS_CA_FILE is required when MONGO_TLS_CERT_KEY_FILE is set');
  }
  if ((e.PRIVATE_MONGO_USERNAME === undefined) !== (e.PRIVATE_MONGO_PASSWORD === undefined)) {
    problems.push('PRIVATE_MONGO_USERNAME and PRIVATE_MONGO_PASSWORD must be set together');
  }
  if (e.PRIVATE_MONGO_URI === undefined) {
    for (const key of ['PRIVATE_MONGO_USERNAME', 'PRIVATE_MONGO_TLS_CA_FILE', 'PRIVATE_MONGO_TLS_CERT_KEY_FILE'] as const) {
      if (e[key] !== undefined) problems.push(`${key} needs PRIVATE_MONGO_URI`);
    }
  }
  for (const key of [
    'MONGO_TLS_CA_FILE',
    'MONGO_TLS_CERT_KEY_FILE',
    'PRIVATE_MONGO_TLS_CA_FILE',
    'PRIVATE_MONGO_TLS_CERT_KEY_FILE',
    'BROKER_TLS_CA_FILE',
    'BROKER_TLS_CERT_FILE',
    'BROKER_TLS_KEY_FILE',
  ] as const) {
    const file = e[key];
    if (file !== undefined && !existsSync(file)) problems.push(`${key}: file ${file} does not exist`);
  }
  if (e.BROKER_URL !== undefined && (e.BROKER_TLS_CERT_FILE === undefined) !== (e.BROKER_TLS_KEY_FILE === undefined)) {
    problems.push('BROKER_TLS_CERT_FILE and BROKER_TLS_KEY_FILE must be set together');
  }
  if (e.ALLOWED_HOSTS.length === 0) problems.push('ALLOWED_HOSTS: must list at least one host name (or *)');
  if ((e.HTTPS_CERT_FILE === undefined) !== (e.HTTPS_KEY_FILE === undefined))
    problems.push('HTTPS_CERT_FILE and HTTPS_KEY_FILE must be set together');
  for (const key of ['HTTPS_CERT_FILE', 'HTTPS_KEY_FILE'] as const) {
    const file = e[key];
    if (file !== undefined && !existsSync(file)) problems.push(`${key}: file ${file} does not exist`);
  }
  if (e.HTTP_REDIRECT_PORT !== undefined && e.HTTPS_CERT_FILE === undefined)
    problems.push('HTTP_REDIRECT_PORT needs HTTPS_CERT_FILE and HTTPS_KEY_FILE');
  for (const entry of e.METRICS_ALLOWED_IPS) {
    const problem = allowListEntryProblem(entry);
    if (problem !== null) problems.push(`METRICS_ALLOWED_IPS: ${problem}`);
  }
  if (problems.length > 0) throw new ConfigError(problems);

  const mongo = toMongoSettings(e);
  return {
    secretKey: e.SECRET_KEY,
    allowedHosts: e.ALLOWED_HOSTS,
    debug: e.DEBUG,
    httpHost: e.HTTP_HOST,
    httpPort: e.HTTP_PORT,
    apiProcesses: e.API_PROCESSES,
    trustProxy: e.TRUST_PROXY,
    https:
      e.HTTPS_CERT_FILE !== undefined && e.HTTPS_KEY_FILE !== undefined
        ? { certFile: e.HTTPS_CERT_FILE, keyFile: e.HTTPS_KEY_FILE, redirectPort: e.HTTP_REDIRECT_PORT }
        : undefined,
    serviceDatabase: e.SERVICE_DATABASE,
    dataStoreAnonymous: e.DATA_STORE_ANONYMOUS,
    catalogAnonymous: e.CATALOG_ANONYMOUS,
    safeMethodPermRequired: e.SAFE_METHOD_PERM_REQUIRED,
    catalogDatabases: e.CATALOG_DATABASES,
    applicationTitle: e.APPLICATION_TITLE,
    maxBodyBytes: e.MAX_BODY_BYTES,
    maxQueryBytes: e.MAX_QUERY_BYTES,
    explorerMap: { tileUrl: e.EXPLORER_TILE_URL, tileAttribution: e.EXPLORER_TILE_ATTRIBUTION, limit: e.EXPLORER_MAP_LIMIT },
    defaultPageSize: e.DEFAULT_PAGE_SIZE,
    heavyQueriesPerUser: e.HEAVY_QUERIES_PER_USER,
    heavyQueriesTotal: e.HEAVY_QUERIES_TOTAL,
    streamedReadsPerUser: e.STREAMED_READS_PER_USER,
    streamSendTimeoutSeconds: e.STREAM_SEND_TIMEOUT_S,
    sessionMaxAgeSeconds: e.SESSION_MAX_AGE_S,
    sharedCacheMs: e.SHARED_CACHE_MS,
    jwtAccessTtlSeconds: e.JWT_ACCESS_TTL_S,
    jwtRefreshTtlSeconds: e.JWT_REFRESH_TTL_S,
    loginMaxFailures: e.LOGIN_MAX_FAILURES,
    loginAccountMaxFailures: e.LOGIN_ACCOUNT_MAX_FAILURES ?? 4 * e.LOGIN_MAX_FAILURES,
    loginAddressMaxFailures: e.LOGIN_ADDRESS_MAX_FAILURES ?? 20 * e.LOGIN_MAX_FAILURES,
    loginWindowSeconds: e.LOGIN_WINDOW_S,
    taskWaitMaxSeconds: e.TASK_WAIT_MAX_S,
    taskListCacheSeconds: e.TASK_LIST_CACHE_S,
    taskListReplyTimeoutMs: e.TASK_LIST_REPLY_TIMEOUT_MS,
    resultCollection: e.RESULT_COLLECTION,
    scheduler: {
      enabled: e.SCHEDULER_ENABLED,
      tickMs: e.SCHEDULE_TICK_MS,
      minIntervalSeconds: e.SCHEDULE_MIN_INTERVAL_S,
      claimLeaseMs: e.SCHEDULE_CLAIM_LEASE_S * 1000,
      graceMs: e.SCHEDULE_GRACE_S * 1000,
    },
    workerDbRole: e.WORKER_DB_ROLE,
    logLevel: e.LOG_LEVEL,
    adminBundleDir: resolve(e.ADMIN_BUNDLE_DIR),
    adminProcess: { mode: e.ADMIN_PROCESS, idleExitMs: e.ADMIN_IDLE_EXIT_S * 1000 },
    clientDownloadsDir: resolve(e.CLIENT_DOWNLOADS_DIR),
    manualDir: resolve(e.MANUAL_DIR),
    metrics: { enabled: e.METRICS_ENABLED, allowedIps: e.METRICS_ALLOWED_IPS },
    workersTrackedMax: e.WORKERS_TRACKED_MAX,
    mongo,
    privateMongo: toPrivateMongoSettings(e, mongo),
    broker: e.BROKER_URL === undefined ? undefined : toBrokerSettings({ ...e, BROKER_URL: e.BROKER_URL }),
  };
}

/**
 * Values from an env file fill in what the process environment does not set: the environment
 * always wins, so `FOO=bar npm start` overrides the file as operators expect.
 */
export function readEnvFile(path: string): Record<string, string> {
  return parseEnv(readFileSync(path, 'utf8')) as Record<string, string>;
}

export function environmentWithFile(env: NodeJS.ProcessEnv, envFile: string | undefined): Record<string, string | undefined> {
  if (envFile === undefined || !existsSync(envFile)) return { ...env };
  return { ...readEnvFile(envFile), ...env };
}
