/**
 * Helpers for the auth integration tests: a cookie-keeping browser over fetch, a snapshot of the
 * auth collections (to prove a refused request changed nothing), and an app started with a
 * logger whose output the test can read.
 */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { BSON } from 'mongodb';
import { expect } from 'vitest';
import { REDACTED_PATHS } from '../../../src/log/logger.js';
import { createServiceContext } from '../../../src/app/service-context.js';
import { createApp } from '../../../src/app/app.js';
import { readResponse, testSettings, uniqueName, type CallResult, type TestApp } from '../../support/app.js';

/** A browser: keeps cookies between requests, never follows redirects. */
export class Browser {
  readonly cookies = new Map<string, string>();
  /** Raw Set-Cookie lines of the last response. */
  lastSetCookie: string[] = [];

  constructor(readonly baseUrl: string) {}

  cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  async request(
    method: string,
    path: string,
    init: { headers?: Record<string, string>; body?: string; contentType?: string } = {},
  ): Promise<CallResult> {
    const headers: Record<string, string> = { accept: 'application/json', ...init.headers };
    if (this.cookies.size > 0) headers.cookie = this.cookieHeader();
    if (init.body !== undefined) headers['content-type'] = init.contentType ?? 'application/json';
    const response = await fetch(new URL(path, this.baseUrl), { method, headers, body: init.body, redirect: 'manual' });
    this.lastSetCookie = response.headers.getSetCookie();
    for (const line of this.lastSetCookie) {
      const [pair = '', ...attrs] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const expired = attrs.some((a) => /^\s*expires=Thu, 01 Jan 1970/i.test(a)) || value === '';
      if (expired) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return readResponse(response);
  }

  get(path: string, headers: Record<string, string> = {}): Promise<CallResult> {
    return this.request('GET', path, { headers });
  }

  postJson(path: string, body: unknown, headers: Record<string, string> = {}): Promise<CallResult> {
    return this.request('POST', path, { headers, body: JSON.stringify(body) });
  }

  postForm(path: string, fields: Record<string, string>, headers: Record<string, string> = {}): Promise<CallResult> {
    return this.request('POST', path, {
      headers: { accept: 'text/html', ...headers },
      body: new URLSearchParams(fields).toString(),
      contentType: 'application/x-www-form-urlencoded',
    });
  }

  /** Logs in through the JSON endpoint; returns the CSRF token. */
  async loginJson(username: string, password: string): Promise<string> {
    const res = await this.postJson('/api/auth/login/', { username, password });
    expect(res.status, res.text).toBe(200);
    return (res.json as { csrftoken: string }).csrftoken;
  }

  /** POST JSON with the X-CSRFToken header taken from the csrftoken cookie. */
  postWithCsrf(path: string, body: unknown): Promise<CallResult> {
    return this.postJson(path, body, { 'X-CSRFToken': this.cookies.get('csrftoken') ?? '' });
  }
}

/** The documented JSON error body. */
export function expectError(res: CallResult, status: number, code?: string): void {
  expect(res.status, res.text).toBe(status);
  expect(res.headers.get('content-type') ?? '').toMatch(/application\/json/);
  const body = res.json as { error: { status: number; code: string; message: string } };
  expect(body.error.status).toBe(status);
  expect(typeof body.error.message).toBe('string');
  expect(body.error.message.length).toBeGreaterThan(0);
  if (code !== undefined) expect(body.error.code).toBe(code);
}

/** Every auth document (users with their hashes, groups, tokens, permissions), canonically serialised. */
export async function authSnapshot(app: Pick<TestApp, 'ctx'>): Promise<string> {
  const db = app.ctx.serviceDb;
  const dump = async (name: string) => db.collection(name).find({}).sort({ _id: 1 }).toArray();
  return BSON.EJSON.stringify({
    users: await dump('auth_user'),
    groups: await dump('auth_group'),
    tokens: await dump('authtoken_token'),
    permissions: await dump('auth_permission'),
  });
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface LoggedApp extends TestApp {
  logLines(): string;
}

/** Like startTestApp, but the service logs at debug level into memory. */
export async function startAppWithCapturedLogs(overrides: Record<string, string> = {}): Promise<LoggedApp> {
  const chunks: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      chunks.push(chunk.toString('utf8'));
      callback();
    },
  });
  const settings = testSettings({ LOG_LEVEL: 'debug', ...overrides });
  // Same redaction as the production logger (src/log/logger.ts), only the destination differs.
  const logger = pino({ level: 'debug', redact: { paths: REDACTED_PATHS, censor: '[redacted]' } }, sink);
  const ctx = await createServiceContext(settings, logger);
  const app = createApp(ctx);
  const server: Server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    app,
    ctx,
    users: ctx.auth.users,
    prefix: uniqueName('d'),
    logLines: () => chunks.join(''),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await ctx.serviceDb.dropDatabase();
      await ctx.close();
    },
  };
}

/** Drops the app's own service database, then stops it. */
export async function closeAndDrop(app: TestApp | undefined): Promise<void> {
  if (app === undefined) return;
  await app.ctx.serviceDb.dropDatabase().catch(() => undefined);
  await app.close();
}
