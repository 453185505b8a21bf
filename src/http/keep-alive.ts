/**
 * How long the server keeps an idle keep-alive connection open. Node's default (5 s) equals the
 * idle time after which common clients drop a pooled connection themselves (httpx, the Python
 * client's transport, keeps one 5 s), so a client that sends its next request just as the server
 * closes the connection gets a reset instead of an answer, and a POST is not retried. Holding
 * idle connections longer than any common client keeps them leaves the closing to the client.
 * Headers must still arrive within headersTimeout, which Node requires to exceed the idle time.
 */
import type { Server } from 'node:http';

export const KEEP_ALIVE_TIMEOUT_MS = 65_000;

export function holdIdleConnections(server: Server): void {
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  server.headersTimeout = KEEP_ALIVE_TIMEOUT_MS + 1_000;
}
