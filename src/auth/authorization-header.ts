/** The `Authorization` header, split once: which of our schemes it uses and its credentials. */
import type { Request } from 'express';

export type ApiScheme = 'bearer' | 'token';

export interface ParsedAuthorization {
  /** Our scheme, or null for none or another scheme (e.g. Basic, which a proxy may use). */
  scheme: ApiScheme | null;
  credentials: string[];
}

export function parseAuthorization(req: Request): ParsedAuthorization {
  const header = req.headers.authorization;
  if (header === undefined) return { scheme: null, credentials: [] };
  const [scheme = '', ...credentials] = header.trim().split(/\s+/);
  const lower = scheme.toLowerCase();
  return { scheme: lower === 'bearer' || lower === 'token' ? lower : null, credentials };
}
