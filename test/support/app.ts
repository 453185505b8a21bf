/**
 * Starts the real service in-process on a free port against the real test services (TLS broker
 * and database from global-setup), in the test worker's broker vhost and with a service database
 * of its own under the worker's database prefix, so test files side by side don't collide.
 */
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import type { Express } from 'express';
import { loadSettings, type Settings } from '../../src/config/settings.js';
import { createLogger } from '../../src/log/logger.js';
import { createServiceContext, type ServiceContext } from '../../src/app/service-context.js';
import { closeApp, createApp, type ExtraRouters } from '../../src/app/app.js';
import { holdIdleConnections } from '../../src/http/keep-alive.js';
import { answerClientErrors } from '../../src/http/client-errors.js';
import type { UserService } from '../../src/auth/module.js';
import { testServices } from './services.js';

export interface TestApp {
  url: string;
  /** The express app itself (to list what it mounts). */
  app: Express;
  ctx: ServiceContext;
  users: UserService;
  /** A random prefix (under the worker's database prefix) for databases this test file creates. */
  prefix: string;
  close(): Promise<void>;
}

export const TEST_SECRET_KEY = 'test-secret-key-0123456789abcdefghijklmnopqrstuvwxyz';

export function uniqueName(prefix = 't'): string {
  return `${prefix}${randomBytes(4).toString('hex')}`;
}

/** A new service database's name under the test worker's database prefix. */
export function serviceDatabaseName(): string {
  return uniqueName(`${testServices().databasePrefix}svc_`);
}

/**
 * Settings of a test service on the suite's broker (the worker's vhost) and database, with its
 * own service database (which holds the task results too).
 */
/** `uri` with the driver's command monitoring on, for tests that count the API's database commands. */
export const monitoredUri = (uri: string): string => `${uri}${uri.includes('?') ? '&' : '?'}monitorCommands=true`;

export function testSettings(overrides: Record<string, string> = {}): Settings {
  return loadSettings(testEnv(overrides));
}

/**
 * The environment testSettings loads. The admin site's pages are made in the test's own process
 * unless ADMIN_PROCESS=separate is asked for (by the test, or for a whole run with
 * TEST_ADMIN_PROCESS=separate): a process of their own takes seconds to start.
 */
export function testEnv(overrides: Record<string, string> = {}): Record<string, string | undefined> {
  return {
    ...testServices().env,
    SECRET_KEY: TEST_SECRET_KEY,
    SERVICE_DATABASE: serviceDatabaseName(),
    ALLOWED_HOSTS: 'localhost,127.0.0.1',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    ADMIN_PROCESS: process.env.TEST_ADMIN_PROCESS ?? 'inline',
    // Every grant, password or drop through the API waits out the processes' caches before it
    // answers (2.25 s at the default): tests make hundreds of them. Tests of the cache itself set
    // the default back.
    SHARED_CACHE_MS: process.env.TEST_SHARED_CACHE_MS ?? '500',
    ...overrides,
  };
}

export async function startTestApp(
  overrides: Record<string, string> = {},
  extra?: (ctx: ServiceContext) => ExtraRouters,
): Promise<TestApp> {
  const env = testEnv(overrides);
  const settings = loadSettings(env);
  const ctx = await createServiceContext(settings, createLogger(settings.logLevel));
  const app = createApp(ctx, { settingsEnv: env, ...extra?.(ctx) });
  const server: Server = app.listen(0, '127.0.0.1');
  answerClientErrors(server);
  holdIdleConnections(server);
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    app,
    ctx,
    users: ctx.auth.users,
    prefix: uniqueName(`${testServices().databasePrefix}d`),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await closeApp(app);
      await ctx.close();
    },
  };
}

export interface CallOptions {
  token?: string;
  bearer?: string;
  body?: unknown;
  /** Raw body text (sent as is, with `contentType`). */
  rawBody?: string;
  contentType?: string;
  headers?: Record<string, string>;
  /** Default: JSON via Accept. */
  accept?: string;
}

export interface CallResult {
  status: number;
  headers: Headers;
  text: string;
  /** Parsed JSON body when the response is JSON, else undefined. */
  json: any;
}

/** One HTTP call as a script would make it. */
export async function call(baseUrl: string, method: string, path: string, options: CallOptions = {}): Promise<CallResult> {
  const headers: Record<string, string> = { accept: options.accept ?? 'application/json', ...options.headers };
  if (options.token !== undefined) headers.authorization = `Token ${options.token}`;
  if (options.bearer !== undefined) headers.authorization = `Bearer ${options.bearer}`;
  let body: string | undefined;
  if (options.rawBody !== undefined) {
    body = options.rawBody;
    headers['content-type'] = options.contentType ?? 'application/json';
  } else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] = options.contentType ?? 'application/json';
  }
  const response = await fetch(new URL(path, baseUrl), { method, headers, body, redirect: 'manual' });
  return readResponse(response);
}

/** Status, headers, text and (for JSON content types) the parsed body of a fetch response. */
export async function readResponse(response: Response): Promise<CallResult> {
  const text = await response.text();
  let json: unknown;
  if ((response.headers.get('content-type') ?? '').includes('json')) {
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
  }
  return { status: response.status, headers: response.headers, text, json };
}
