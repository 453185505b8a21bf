import type { Request } from 'express';
import { isValidHostHeader } from './allowed-hosts.js';

/**
 * Scheme and host of this request. Requests that reach a handler had their Host checked against
 * ALLOWED_HOSTS; the error page of a refused one still needs a base, so an unusable Host
 * becomes `localhost` there instead of making the error response itself fail.
 */
export function requestBaseUrl(req: Request): string {
  const host = req.get('host');
  return `${req.protocol}://${host !== undefined && isValidHostHeader(host) ? host : 'localhost'}`;
}

export function absoluteUrl(req: Request, path: string): string {
  return new URL(path, requestBaseUrl(req)).toString();
}

/**
 * The full URL of this request as the client sent it (for paging links). The request target is
 * always read as a path on this site: resolved as a relative reference, `//a/b` would name a
 * host "a" (and `//` or `//a%2f` no valid URL at all), so it is appended to the base instead.
 */
export function requestUrl(req: Request): URL {
  const target = req.originalUrl.startsWith('/') ? req.originalUrl : `/${req.originalUrl}`;
  return new URL(`${requestBaseUrl(req)}${target}`);
}
