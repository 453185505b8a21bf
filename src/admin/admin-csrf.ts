/**
 * CSRF protection for the admin site's own API calls (AdminJS posts multipart forms with axios).
 *
 * The session cookie is SameSite=Lax, which already keeps it off cross-site POSTs; on top of that
 * every unsafe admin request must pass two checks:
 * - the token: axios sends the `XSRF-TOKEN` cookie back as the `X-XSRF-TOKEN` header on
 *   same-origin requests, so the session's CSRF secret (the value of `csrftoken`) is also set as
 *   `XSRF-TOKEN`, scoped to the admin path, and the header must equal the session's secret;
 * - the origin: a browser's `Origin` (or, without it, `Referer`) must be this site.
 */
import type { Request, RequestHandler } from 'express';
import { csrfFailed, sessionCsrfToken, tokensEqual } from '../auth/csrf.js';
import { requestBaseUrl } from '../http/base-url.js';

export const ADMIN_XSRF_COOKIE = 'XSRF-TOKEN';
export const ADMIN_XSRF_HEADER = 'X-XSRF-TOKEN';
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

function originOf(value: string | undefined): string | null {
  if (value === undefined || value === '' || value === 'null') return null;
  try {
    return new URL(value).origin;
  } catch {
    return null;
  }
}

/** The request's own origin must match the browser-reported one (Origin, else Referer). */
function sameOrigin(req: Request): boolean {
  const expected = new URL(requestBaseUrl(req)).origin;
  const reported = originOf(req.get('origin')) ?? originOf(req.get('referer'));
  return reported === expected;
}

export function adminCsrf(cookiePath: string): RequestHandler {
  return (req, res, next) => {
    const secret = sessionCsrfToken(req);
    if (secret === undefined) {
      next(csrfFailed('there is no session. Log in again.'));
      return;
    }
    if (SAFE_METHODS.has(req.method)) {
      const cookies = req.cookies as Record<string, unknown> | undefined;
      if (cookies?.[ADMIN_XSRF_COOKIE] !== secret) {
        res.cookie(ADMIN_XSRF_COOKIE, secret, { httpOnly: false, sameSite: 'lax', secure: req.secure, path: cookiePath });
      }
      next();
      return;
    }
    if (!sameOrigin(req)) {
      next(csrfFailed('the request did not come from this site (Origin/Referer mismatch).'));
      return;
    }
    const submitted = req.get(ADMIN_XSRF_HEADER);
    if (submitted === undefined || submitted === '' || !tokensEqual(submitted, secret)) {
      next(csrfFailed(`the ${ADMIN_XSRF_HEADER} header is missing or does not belong to this session. Reload the page.`));
      return;
    }
    next();
  };
}
