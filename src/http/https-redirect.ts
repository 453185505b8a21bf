/**
 * The plain-HTTP listener of an API that serves HTTPS itself (local runtime with a public host):
 * it answers every request with a permanent redirect to the same path over HTTPS. 308 keeps the
 * method and body, so a script that POSTs to http:// is not silently turned into a GET. Only
 * hosts in ALLOWED_HOSTS are redirected, so the listener cannot be used as an open redirect.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { hostWithoutPort, isHostAllowed } from './allowed-hosts.js';

export function httpsLocation(host: string, path: string, httpsPort: number): string {
  const name = hostWithoutPort(host).replace(/\.$/, '');
  return `https://${name}${httpsPort === 443 ? '' : `:${httpsPort}`}${path.startsWith('/') ? path : '/'}`;
}

export function createHttpsRedirectServer(allowedHosts: readonly string[], httpsPort: number): Server {
  return createServer((req: IncomingMessage, res: ServerResponse) => {
    const host = req.headers.host;
    res.setHeader('content-type', 'application/json');
    if (host === undefined || !isHostAllowed(host, allowedHosts)) {
      res.statusCode = 400;
      res.end(
        JSON.stringify({
          error: { status: 400, code: 'disallowed_host', message: 'The Host header of this request is not in ALLOWED_HOSTS.' },
        }),
      );
      return;
    }
    const location = httpsLocation(host, req.url ?? '/', httpsPort);
    res.statusCode = 308;
    res.setHeader('location', location);
    res.end(JSON.stringify({ error: { status: 308, code: 'https_required', message: `This service is served over HTTPS: ${location}` } }));
  });
}
