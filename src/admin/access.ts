/**
 * Who may enter the admin site, decided before AdminJS is even loaded: staff and superusers
 * logged in with a browser session (the same login as the browsable API, /api/auth/login/).
 *
 * - anonymous visitors are sent to the login page with `next` pointing back here (the admin's
 *   own API calls get the same redirect, which AdminJS's client recognises as "session expired");
 * - a logged-in account without staff status gets the login page again, with a clear message,
 *   so it can switch accounts (Django's admin does the same), status 403;
 * - a request authenticated by an API token or JWT is refused: the admin site is for browsers.
 */
import type { Request, RequestHandler, Response } from 'express';
import { csrfCookie, newCsrfToken, sessionCsrfToken, setCsrfCookie } from '../auth/csrf.js';
import { loginPage } from '../auth/pages.js';
import type { Principal } from '../auth/principal.js';
import { forbidden } from '../errors.js';
import { urls } from '../http/urls.js';

export const ADMIN_ROOT = urls.admin();
export const LOGIN_PATH = urls.login();
export const LOGOUT_PATH = urls.logout();

export function mayUseAdmin(p: Principal): boolean {
  return p.authMethod === 'session' && (p.isStaff || p.isSuperuser);
}

export function loginRedirect(next: string): string {
  return `${LOGIN_PATH}?next=${encodeURIComponent(next)}`;
}

export function notStaffMessage(username: string): string {
  return (
    `You are logged in as ${username}, but this account may not use the administration site ` +
    '(it needs staff status). Log in with a staff account to continue.'
  );
}

function sendNotStaffPage(req: Request, res: Response, title: string): void {
  const principal = req.principal;
  // The login form is a double-submit form: reuse the session's token so the csrftoken cookie
  // the rest of the API relies on keeps its value.
  const token = sessionCsrfToken(req) ?? csrfCookie(req) ?? newCsrfToken();
  setCsrfCookie(req, res, token);
  res.status(403);
  res.setHeader('Content-Type', 'text/html; charset=utf-8');
  res.setHeader('Cache-Control', 'no-store');
  res.send(
    loginPage(
      { title, cspNonce: res.locals.cspNonce as string | undefined },
      { action: LOGIN_PATH, csrfToken: token, next: req.originalUrl, error: notStaffMessage(principal.username ?? '') },
    ),
  );
}

export function adminAccessGate(title: string): RequestHandler {
  return (req, res, next) => {
    const principal = req.principal;
    if (principal.authMethod === 'token' || principal.authMethod === 'jwt') {
      next(forbidden('The administration site needs a browser session: log in at /api/auth/login/.', 'admin_needs_session'));
      return;
    }
    if (principal.userId === null) {
      res.setHeader('Cache-Control', 'no-store');
      res.redirect(302, loginRedirect(req.originalUrl));
      return;
    }
    if (!mayUseAdmin(principal)) {
      sendNotStaffPage(req, res, title);
      return;
    }
    next();
  };
}
