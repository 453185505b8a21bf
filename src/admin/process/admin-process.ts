/**
 * The AdminJS part of the admin site in a process of its own, started on the first admin page
 * and stopped after a while without one.
 *
 * Why: AdminJS's server code pulls its whole browser side in with it (React components, the
 * design system, their libraries): about 100 MB of memory that a process cannot give back once
 * loaded, for a site an administrator opens now and then. In a child process that memory goes
 * back to the system when the child stops, and the API keeps its own footprint.
 *
 * What stays in the API process: the session, the authentication, the access gate, the CSRF
 * check and the Operations and Indexes pages' JSON (they need the cluster's view, which only the
 * API processes have). Only a request that passed all of them reaches the child, over a Unix
 * socket in a directory only this process's user may enter, with the administrator it stands
 * for and the page's CSP nonce in two headers of this service's own (any such header a client
 * sent is dropped first).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { Agent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { ApiError } from '../../errors.js';
import type { Logger } from '../../log/logger.js';
import { currentAdminFor, type ServiceAdmin } from '../current-admin.js';

/** The administrator a forwarded request stands for (JSON, base64url). */
export const ADMIN_HEADER = 'x-cybercom-admin';
/** The CSP nonce of the page being made (the API's security headers chose it). */
export const NONCE_HEADER = 'x-cybercom-admin-nonce';
/** The child's socket path, in its environment. */
export const SOCKET_ENV = 'CYBERCOM_ADMIN_SOCKET';
/** What the child sends once it serves. */
export const READY_MESSAGE = 'admin-process-ready';

/** Headers that belong to one connection, not to the message. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'proxy-connection', 'te', 'trailer']);

export interface AdminProcessOptions {
  /** The child's entry module. */
  entry: URL;
  /** The settings the child loads (the API's own). */
  env: Record<string, string | undefined>;
  /** Stop the child after this long without a request. */
  idleExitMs: number;
  logger: Logger;
  /** How long the child may take to start serving. */
  startTimeoutMs?: number;
}

interface Running {
  child: ChildProcess;
  socketPath: string;
  agent: Agent;
  exited: Promise<void>;
}

export function encodeAdmin(admin: ServiceAdmin): string {
  return Buffer.from(JSON.stringify(admin)).toString('base64url');
}

export function decodeAdmin(value: string | undefined): ServiceAdmin | undefined {
  if (value === undefined) return undefined;
  try {
    const parsed = JSON.parse(Buffer.from(value, 'base64url').toString('utf8')) as Partial<ServiceAdmin> | null;
    if (
      parsed === null ||
      typeof parsed.id !== 'string' ||
      typeof parsed.username !== 'string' ||
      typeof parsed.isSuperuser !== 'boolean' ||
      typeof parsed.isTaskAdmin !== 'boolean'
    ) {
      return undefined;
    }
    return parsed as ServiceAdmin;
  } catch {
    return undefined;
  }
}

/**
 * The child runs TypeScript where this module is TypeScript (development and tests, through
 * tsx), with tsx named by its resolved location: the API may run in any working directory.
 */
function childExecArgv(entry: URL): string[] {
  return entry.pathname.endsWith('.ts') ? ['--import', pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href] : [];
}

export class AdminProcess {
  private running: Promise<Running> | undefined;
  private inFlight = 0;
  private lastActivity = Date.now();
  private readonly idleTimer: NodeJS.Timeout;
  private closed = false;

  constructor(private readonly options: AdminProcessOptions) {
    this.idleTimer = setInterval(() => this.stopIfIdle(), Math.min(Math.max(options.idleExitMs / 4, 250), 30_000));
    this.idleTimer.unref();
  }

  /** The pid of the child while one runs (for measurements and tests). */
  async pid(): Promise<number | undefined> {
    const running = await this.running?.catch(() => undefined);
    return running?.child.pid;
  }

  /** Forwards a request that passed the admin site's checks to the child, starting it if needed. */
  handler(): RequestHandler {
    return (req, res, next) => {
      this.inFlight++;
      this.lastActivity = Date.now();
      let finished = false;
      const done = () => {
        if (finished) return;
        finished = true;
        this.inFlight--;
        this.lastActivity = Date.now();
      };
      res.once('close', done);
      this.start().then(
        (running) => this.forward(running, req, res, next),
        (err: unknown) => {
          this.options.logger.error({ err }, 'admin process did not start');
          next(unavailable());
        },
      );
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.idleTimer);
    await this.stop();
  }

  private start(): Promise<Running> {
    if (this.closed) return Promise.reject(new Error('the admin process is closed'));
    this.running ??= this.spawn().catch((err: unknown) => {
      this.running = undefined;
      throw err;
    });
    return this.running;
  }

  private async spawn(): Promise<Running> {
    const { entry, env, logger } = this.options;
    const dir = await mkdtemp(join(tmpdir(), 'cybercom-admin-'));
    const socketPath = join(dir, 'admin.sock');
    const started = Date.now();
    const child = fork(fileURLToPath(entry), [], {
      env: {
        ...process.env,
        ...env,
        [SOCKET_ENV]: socketPath,
        // The child makes admin pages only: no schedules fired, no metrics kept, no cluster of its own.
        SCHEDULER_ENABLED: 'false',
        METRICS_ENABLED: 'false',
        API_PROCESSES: '1',
      },
      execArgv: childExecArgv(entry),
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const exited = once(child, 'exit').then(
      () => undefined,
      () => undefined,
    );
    void exited.then(async () => {
      // A child that stopped (idle, crashed or killed) is started again by the next request.
      if (this.running !== undefined && (await this.running.catch(() => undefined))?.child === child) this.running = undefined;
      await rm(dir, { recursive: true, force: true });
    });
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error('the admin process did not start in time')),
          this.options.startTimeoutMs ?? 120_000,
        );
        child.on('message', (message: unknown) => {
          if ((message as { type?: unknown } | null)?.type === READY_MESSAGE) {
            clearTimeout(timer);
            resolve();
          }
        });
        void exited.then(() => {
          clearTimeout(timer);
          reject(new Error(`the admin process exited while starting (code ${String(child.exitCode)}, signal ${String(child.signalCode)})`));
        });
      });
    } catch (err) {
      child.kill('SIGKILL');
      throw err;
    }
    logger.info({ pid: child.pid, ms: Date.now() - started }, 'admin process started');
    return { child, socketPath, agent: new Agent({ keepAlive: true, maxSockets: 16 }), exited };
  }

  private forward(running: Running, req: Request, res: Response, next: NextFunction): void {
    const headers: IncomingHttpHeaders = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (name === ADMIN_HEADER || name === NONCE_HEADER || HOP_BY_HOP.has(name)) continue;
      headers[name] = value;
    }
    headers[ADMIN_HEADER] = encodeAdmin(currentAdminFor(req.principal));
    headers[NONCE_HEADER] = String(res.locals.cspNonce ?? '');
    const upstream = httpRequest({
      socketPath: running.socketPath,
      agent: running.agent,
      method: req.method,
      path: req.originalUrl,
      headers,
    });
    upstream.on('response', (answer) => {
      res.status(answer.statusCode ?? 502);
      for (const [name, value] of Object.entries(answer.headers)) {
        if (value !== undefined && !HOP_BY_HOP.has(name)) res.setHeader(name, value);
      }
      answer.pipe(res);
      answer.on('error', () => res.destroy());
    });
    upstream.on('error', (err) => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      this.options.logger.warn({ err }, 'admin process did not answer');
      next(unavailable());
    });
    res.once('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    req.pipe(upstream);
  }

  private stopIfIdle(): void {
    if (this.running === undefined || this.inFlight > 0) return;
    if (Date.now() - this.lastActivity < this.options.idleExitMs) return;
    this.options.logger.info({ idleMs: Date.now() - this.lastActivity }, 'admin process idle: stopping it');
    void this.stop();
  }

  private async stop(): Promise<void> {
    const running = await this.running?.catch(() => undefined);
    this.running = undefined;
    if (running === undefined) return;
    running.agent.destroy();
    running.child.kill('SIGTERM');
    const forced = setTimeout(() => running.child.kill('SIGKILL'), 10_000);
    await running.exited;
    clearTimeout(forced);
  }
}

const unavailable = (): ApiError =>
  new ApiError(503, 'admin_unavailable', 'The admin site is not available right now. Try again shortly.', undefined, {
    'Retry-After': '5',
  });
