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

/** The full URL of this request as the client sent it (for paging links). */
export function requestUrl(req: Request): URL {
  return new URL(req.originalUrl, requestBaseUrl(req));
}
