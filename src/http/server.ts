/** Runs the HTTP server with a graceful shutdown: stop accepting, finish requests, close clients. */
import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ServiceContext } from '../service.js';
import { createApp, type ExtraRouters } from './app.js';

export interface RunningServer {
  server: Server;
  url: string;
  close(): Promise<void>;
}

export async function startHttpServer(ctx: ServiceContext, extra?: ExtraRouters): Promise<RunningServer> {
  const app = createApp(ctx, extra);
  const server = app.listen(ctx.settings.httpPort, ctx.settings.httpHost);
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const host = ctx.settings.httpHost === '0.0.0.0' ? 'localhost' : ctx.settings.httpHost;
  let closing: Promise<void> | undefined;
  return {
    server,
    url: `http://${host}:${port}`,
    close() {
      closing ??= (async () => {
        server.close();
        server.closeIdleConnections();
        const forced = setTimeout(() => server.closeAllConnections(), 10_000);
        await once(server, 'close').catch(() => undefined);
        clearTimeout(forced);
        await ctx.close();
      })();
      return closing;
    },
  };
}
