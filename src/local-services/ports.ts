/** TCP port helpers for starting local servers on ports nobody else uses. */
import { createConnection, createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * A port the kernel considers free right now on 127.0.0.1. There is a window between closing our
 * probe and the server binding it; callers start servers soon after, and a lost race shows up as
 * a start-up error that names the port.
 */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      if (address === null || typeof address === 'string') {
        server.close();
        reject(new Error('could not determine a free port'));
        return;
      }
      server.close(() => resolve(address.port));
    });
  });
}

function tryConnect(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host, port });
    socket.setTimeout(1000);
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.once('connect', () => done(true));
    socket.once('timeout', () => done(false));
    socket.once('error', () => done(false));
  });
}

export interface WaitForPortOptions {
  /** Abort early, e.g. when the server process has already exited. */
  signal?: AbortSignal;
  intervalMs?: number;
}

/** Resolves once a TCP connection to host:port succeeds; rejects after timeoutMs or on abort. */
export async function waitForPort(host: string, port: number, timeoutMs: number, opts: WaitForPortOptions = {}): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const interval = opts.intervalMs ?? 200;
  for (;;) {
    opts.signal?.throwIfAborted();
    if (await tryConnect(host, port)) return;
    if (Date.now() >= deadline) throw new Error(`nothing listening on ${host}:${port} after ${timeoutMs} ms`);
    await sleep(interval);
  }
}

/** True when nothing listens on `port` (of any local address): binding it exclusively works. */
export function isPortFree(port: number, host = '0.0.0.0'): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    // Only "in use" means taken; any other error (no such address, privileged port) is for the
    // server that binds it to report.
    server.once('error', (err: NodeJS.ErrnoException) => resolve(err.code !== 'EADDRINUSE'));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/**
 * Resolves once `port` is free, e.g. after a previous server on it exited; rejects after
 * timeoutMs. A server started while another still holds its port would fail to bind, and its
 * readiness check would talk to the old one.
 */
export async function waitForPortFree(
  port: number,
  timeoutMs: number,
  opts: { signal?: AbortSignal; intervalMs?: number } = {},
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    opts.signal?.throwIfAborted();
    if (await isPortFree(port)) return;
    if (Date.now() >= deadline) throw new Error(`port ${port} is still in use by another process after ${Math.round(timeoutMs / 1000)} s`);
    await sleep(opts.intervalMs ?? 250);
  }
}
