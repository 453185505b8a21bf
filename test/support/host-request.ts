/**
 * One HTTP(S) request to 127.0.0.1 with an explicit Host header and, for HTTPS, the SNI name and
 * the CA to trust: how tests reach a service by its public name without DNS.
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';

export interface HostAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export interface HostRequest {
  host: string;
  method?: string;
  /** Sent as a JSON body. */
  json?: unknown;
  /** HTTPS: the CA certificate to trust and the server name to ask for. */
  ca?: string;
  servername?: string;
}

export function requestWithHost(url: string, init: HostRequest): Promise<HostAnswer> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const request = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = request(
      target,
      {
        method: init.method ?? 'GET',
        headers: {
          host: init.host,
          accept: 'application/json',
          ...(init.json === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(target.protocol === 'https:' ? { ca: init.ca, servername: init.servername } : {}),
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end(init.json === undefined ? undefined : JSON.stringify(init.json));
  });
}
