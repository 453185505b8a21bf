/**
 * A user's HTTPS client for the stack's public URL: https://<public host>:<port>/ with the site's
 * certificate checked against the CA that issued it, the public host name resolved to an address
 * of this machine (as DNS would for a real domain), a cookie jar for session logins.
 */
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';

export interface HttpResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json<T = unknown>(): T;
}

export interface SiteOptions {
  /** The public host name (what the certificate and ALLOWED_HOSTS name). */
  host: string;
  port: number;
  /** Address the host name resolves to. */
  address: string;
  /** CA of the site certificate. */
  ca: string;
}

export class Site {
  private readonly cookies = new Map<string, string>();
  constructor(private readonly opts: SiteOptions) {}

  get origin(): string {
    return `https://${this.opts.host}:${this.opts.port}`;
  }

  request(
    method: string,
    path: string,
    /** `jsonText`: a JSON body sent as written (JSON.stringify would turn `3.0` into `3`). */
    init: { headers?: Record<string, string>; json?: unknown; jsonText?: string; timeoutMs?: number } = {},
  ): Promise<HttpResponse> {
    const text = init.jsonText ?? (init.json === undefined ? undefined : JSON.stringify(init.json));
    const body = text === undefined ? undefined : Buffer.from(text);
    const headers: Record<string, string> = { accept: 'application/json', ...init.headers };
    if (body) headers['content-type'] = 'application/json';
    if (this.cookies.size > 0) headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const lookup: LookupFunction = (_hostname, options, callback) => {
      if (typeof options === 'object' && options.all) {
        (callback as unknown as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [
          { address: this.opts.address, family: 4 },
        ]);
      } else {
        callback(null, this.opts.address, 4);
      }
    };
    return new Promise((resolve, reject) => {
      const req = httpsRequest(
        {
          host: this.opts.host,
          port: this.opts.port,
          path,
          method,
          headers,
          ca: this.opts.ca,
          servername: this.opts.host,
          lookup,
          timeout: init.timeoutMs ?? 60_000,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            for (const cookie of [res.headers['set-cookie'] ?? []].flat()) {
              const [pair] = cookie.split(';');
              const eq = pair?.indexOf('=') ?? -1;
              if (pair && eq > 0) this.cookies.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
            }
            const text = Buffer.concat(chunks).toString('utf8');
            resolve({
              status: res.statusCode ?? 0,
              headers: res.headers,
              text,
              json: <T>() => {
                try {
                  return JSON.parse(text) as T;
                } catch {
                  throw new Error(`${method} ${path}: not JSON (status ${res.statusCode}): ${text.slice(0, 300)}`);
                }
              },
            });
          });
        },
      );
      req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer in time`)));
      req.on('error', reject);
      req.end(body);
    });
  }

  /** A request that must answer `expected`; returns its JSON body. */
  async expect<T = Record<string, unknown>>(
    expected: number,
    method: string,
    path: string,
    init: Parameters<Site['request']>[2] = {},
  ): Promise<T> {
    const res = await this.request(method, path, init);
    if (res.status !== expected) throw new Error(`${method} ${path}: expected ${expected}, got ${res.status}: ${res.text.slice(0, 500)}`);
    return res.json<T>();
  }
}
