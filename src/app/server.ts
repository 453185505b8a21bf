/** Runs the HTTP server with a graceful shutdown: stop accepting, finish requests, close clients. */
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { ServiceContext } from './service-context.js';
import { closeApp, createApp, type ExtraRouters } from './app.js';
import { createHttpsRedirectServer } from '../http/https-redirect.js';
import { answerClientErrors } from '../http/client-errors.js';
import { holdIdleConnections } from '../http/keep-alive.js';

export interface RunningServer {
  server: Server;
  url: string;
  close(): Promise<void>;
}

export async function startHttpServer(ctx: ServiceContext, extra?: ExtraRouters): Promise<RunningServer> {
  const app = createApp(ctx, extra);
  const { https, httpHost, httpPort } = ctx.settings;
  // With a certificate the API serves HTTPS itself (no proxy in front): the local runtime's
  // public host. The files are read once; a rotated certificate takes effect on restart.
  const server: Server = https
    ? createHttpsServer({ cert: readFileSync(https.certFile), key: readFileSync(https.keyFile) }, app)
    : createServer(app);
  answerClientErrors(server);
  holdIdleConnections(server);
  server.listen(httpPort, httpHost);
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const redirect = https?.redirectPort === undefined ? undefined : createHttpsRedirectServer(ctx.settings.allowedHosts, port);
  if (redirect) {
    redirect.listen(https?.redirectPort, httpHost);
    await once(redirect, 'listening');
  }
  const host = httpHost === '0.0.0.0' ? 'localhost' : httpHost;
  let closing: Promise<void> | undefined;
  return {
    server,
    url: `${https ? 'https' : 'http'}://${host}:${port}`,
    close() {
      closing ??= (async () => {
        redirect?.close();
        redirect?.closeAllConnections();
        server.close();
        server.closeIdleConnections();
        const forced = setTimeout(() => server.closeAllConnections(), 10_000);
        await once(server, 'close').catch(() => undefined);
        clearTimeout(forced);
        await closeApp(app);
        await ctx.close();
      })();
      return closing;
    },
  };
}
