/**
 * Cross-site request forgery protection for cookie sessions (Django's scheme, simplified):
 * a random secret is issued at login, kept in the session and sent as the `csrftoken` cookie
 * (readable by the page's JavaScript, SameSite=Lax). An unsafe request authenticated by the
 * session must echo it in `X-CSRFToken`; the header must equal both the cookie and the session's
 * value. Token and JWT requests carry their credential in a header a foreign site cannot set,
 * so they are exempt. The login and logout pages accept the value from a form field instead,
 * which only exists after body parsing, so they check it themselves (see routes/session-routes.ts).
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import { forbidden } from '../errors.js';

export const CSRF_COOKIE = 'csrftoken';
export const CSRF_HEADER = 'X-CSRFToken';
export const CSRF_FORM_FIELD = 'csrfmiddlewaretoken';
const CSRF_COOKIE_MAX_AGE_MS = 365 * 24 * 3600 * 1000;
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE']);
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{32,128}$/;

/** Paths (relative to /api) whose handlers check CSRF after reading the form body. */
const SELF_CHECKING_PATHS = new Set(['/auth/login/', '/auth/logout/']);

export const csrfFailed = (message: string) => forbidden(`CSRF verification failed: ${message}`, 'csrf_failed');

export function newCsrfToken(): string {
  return randomBytes(32).toString('base64url');
}

export function isWellFormedCsrfToken(value: unknown): value is string {
  return typeof value === 'string' && TOKEN_SHAPE.test(value);
}

/** Constant-time equality that does not leak the length either (both sides are hashed first). */
export function tokensEqual(a: string, b: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(a), digest(b));
}

export function setCsrfCookie(req: Request, res: Response, token: string): void {
  res.cookie(CSRF_COOKIE, token, {
    httpOnly: false,
    sameSite: 'lax',
    secure: req.secure,
    path: '/',
    maxAge: CSRF_COOKIE_MAX_AGE_MS,
  });
}

export function csrfCookie(req: Request): string | undefined {
  const value = (req.cookies as Record<string, unknown> | undefined)?.[CSRF_COOKIE];
  return isWellFormedCsrfToken(value) ? value : undefined;
}

/** The session's CSRF secret, created for sessions that predate it (e.g. made by the admin site). */
export function sessionCsrfToken(req: Request): string | undefined {
  if (req.session === undefined) return undefined;
  req.session.csrfToken ??= newCsrfToken();
  return req.session.csrfToken;
}

/** Login form: the submitted value (form field or header) must equal the cookie (double submit). */
export function verifyDoubleSubmit(req: Request, submitted: string | undefined): void {
  const cookie = csrfCookie(req);
  if (cookie === undefined) throw csrfFailed('the csrftoken cookie is missing. Reload the login page and try again.');
  if (submitted === undefined || submitted.length === 0)
    throw csrfFailed(`the ${CSRF_FORM_FIELD} field or ${CSRF_HEADER} header is missing.`);
  if (!tokensEqual(submitted, cookie)) throw csrfFailed('the submitted token does not match the csrftoken cookie.');
}

/** Session requests: the submitted value must equal the cookie and the session's secret. */
export function verifySessionCsrf(req: Request, submitted: string | undefined): void {
  if (submitted === undefined || submitted.length === 0) {
    throw csrfFailed(`send the value of the csrftoken cookie in the ${CSRF_HEADER} header.`);
  }
  const cookie = csrfCookie(req);
  if (cookie === undefined) throw csrfFailed('the csrftoken cookie is missing.');
  if (!tokensEqual(submitted, cookie)) throw csrfFailed(`the ${CSRF_HEADER} header does not match the csrftoken cookie.`);
  const expected = req.session?.csrfToken;
  if (expected === undefined || !tokensEqual(submitted, expected)) {
    throw csrfFailed('the token does not belong to this session. Log in again.');
  }
}

export function csrfProtection(): RequestHandler {
  return (req, res, next) => {
    if (req.principal.authMethod !== 'session') return next();
    if (SAFE_METHODS.has(req.method)) {
      // Keep the cookie in step with the session, so a page can always read the current value.
      const token = sessionCsrfToken(req);
      if (token !== undefined && csrfCookie(req) !== token) setCsrfCookie(req, res, token);
      return next();
    }
    if (SELF_CHECKING_PATHS.has(req.path)) return next();
    try {
      verifySessionCsrf(req, req.get(CSRF_HEADER));
      next();
    } catch (err) {
      next(err);
    }
  };
}
