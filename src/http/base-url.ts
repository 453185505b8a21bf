import type { Request } from 'express';

/** Scheme and host of this request (Host already checked against ALLOWED_HOSTS). */
export function requestBaseUrl(req: Request): string {
  return `${req.protocol}://${req.get('host') ?? 'localhost'}`;
}

export function absoluteUrl(req: Request, path: string): string {
  return new URL(path, requestBaseUrl(req)).toString();
}

/** The full URL of this request as the client sent it (for paging links). */
export function requestUrl(req: Request): URL {
  return new URL(req.originalUrl, requestBaseUrl(req));
}
