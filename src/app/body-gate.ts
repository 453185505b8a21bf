/**
 * Who may send a body is decided before it is read. Authentication (session, token, JWT, link)
 * comes from the headers and has run by now; a write with a body is then answered without its
 * body being read or parsed when
 * - the caller is anonymous and the path is not one that takes anonymous bodies (logging in,
 *   obtaining or checking a token): 401 where a route serves the method, and where none does the
 *   body is left unread for the route's own 404 or 405;
 * - the URL alone decides a permission the caller lacks (a collection's records, creating
 *   databases and collections, running a named task): 401 or 403, as the route would answer.
 * Whatever else a route checks (what the body asks for, whether a collection exists) it checks
 * after the body, as before. The answer says `Connection: close`: the server stops reading the
 * upload, and the client learns to stop sending it, instead of the rest being read to keep the
 * connection alive.
 */
import type { Request, RequestHandler } from 'express';
import type { ApiError } from '../errors.js';
import { unauthenticated } from '../errors.js';
import { isAuthenticated } from '../auth/principal.js';
import { BODY_METHODS, hasBody } from '../http/body.js';
import type { Mount } from '../http/route-table.js';

/** The permission a mount's URL decides: `segments` are the decoded path segments below its prefix. */
export type UrlPermission = (req: Request, segments: readonly string[]) => ApiError | undefined;

export interface BodyGateOptions {
  /** Full paths (with their trailing slash) whose bodies anonymous callers may send. */
  anonymousPaths: readonly string[];
  /** Per mount prefix, the refusal its URL decides. */
  permissions: readonly { prefix: string; refusal: UrlPermission }[];
  /** Whether a declared route serves `method` at the full `path`. */
  serves: (path: string, method: string) => boolean;
}

const withSlash = (path: string): string => (path.endsWith('/') ? path : `${path}/`);

/** The decoded segments of `path` below `prefix`, or undefined when it is not below it or not decodable. */
function segmentsBelow(path: string, prefix: string): string[] | undefined {
  const base = withSlash(prefix);
  if (!withSlash(path).startsWith(base)) return undefined;
  try {
    return path
      .slice(base.length)
      .split('/')
      .filter((s) => s !== '')
      .map(decodeURIComponent);
  } catch {
    // Not decodable: the route answers its own 400.
    return undefined;
  }
}

export function bodyGate(options: BodyGateOptions): RequestHandler {
  const anonymous = new Set(options.anonymousPaths.map(withSlash));
  const refusalFor = (req: Request): ApiError | 'unread' | undefined => {
    const path = req.baseUrl + req.path;
    if (!isAuthenticated(req.principal)) {
      if (anonymous.has(withSlash(path))) return undefined;
      return options.serves(path, req.method) ? unauthenticated() : 'unread';
    }
    for (const { prefix, refusal } of options.permissions) {
      const segments = segmentsBelow(path, prefix);
      if (segments !== undefined) return refusal(req, segments);
    }
    return undefined;
  };
  return (req, res, next) => {
    if (!BODY_METHODS.has(req.method) || !hasBody(req)) return next();
    const refusal = refusalFor(req);
    if (refusal === undefined) return next();
    res.setHeader('Connection', 'close');
    if (refusal !== 'unread') return next(refusal);
    // As if parsed already (body.ts passes such a request on): the route answers 404 or 405.
    Object.assign(req, { _body: true, body: undefined });
    next();
  };
}

/** Whether `path` matches the express pattern `pattern` (`:name` parameters, an optional trailing slash). */
function matches(pattern: string, path: string): boolean {
  const parts = pattern.split('/').filter((p) => p !== '');
  const segments = path.split('/').filter((p) => p !== '');
  return parts.length === segments.length && parts.every((part, i) => part.startsWith(':') || part === segments[i]);
}

/** A `serves` for BodyGateOptions over mounts: each prefix with its declared routes. */
export function servedBy(mounts: readonly Mount[]): (path: string, method: string) => boolean {
  return (path, method) =>
    mounts.some(({ prefix, routes }) => routes.some((decl) => Object.hasOwn(decl.operations, method) && matches(prefix + decl.path, path)));
}
