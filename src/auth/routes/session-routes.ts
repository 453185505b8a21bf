/**
 * Browser sign-in: /auth/login/ and /auth/logout/.
 *
 * Login takes either the HTML form (double-submit CSRF: the hidden field or X-CSRFToken must
 * equal the csrftoken cookie set when the form was rendered; success → 302 to `next`) or JSON
 * `{username, password}` (→ 200 `{username, csrftoken}`; JSON cannot be posted cross-site
 * without CORS, so it needs no CSRF token). The session id is regenerated on login and a fresh
 * CSRF secret issued.
 *
 * Logout: GET shows a confirmation page with a POST form (a GET that logs out could be
 * triggered by any image tag on another site); POST destroys the session (CSRF checked when a
 * session is logged in) → 302 to /api/ for the form, 200 JSON otherwise.
 */
import { type Router, type Request, type Response } from 'express';
import type { z } from 'zod';
import { ApiError, badRequest } from '../../errors.js';
import { respond } from '../../http/respond.js';
import type { Account } from '../accounts.js';
import {
  CSRF_FORM_FIELD,
  CSRF_HEADER,
  csrfCookie,
  newCsrfToken,
  sessionCsrfToken,
  setCsrfCookie,
  verifyDoubleSubmit,
  verifySessionCsrf,
} from '../csrf.js';
import { loginPage, logoutPage, type PageShell } from '../pages.js';
import { DEFAULT_AFTER_LOGIN, safeNextPath } from '../safe-redirect.js';
import { SESSION_COOKIE } from '../session.js';
import type { AuthRouteDeps } from './deps.js';
import { attemptPasswordLogin } from './password-login.js';
import { isFormPost } from './route-helpers.js';
import { serve } from '../../http/route-table.js';
import { AUTH_ROUTES, type formLoginBody, type formLogoutBody, type jsonLoginBody } from './route-table.js';
import { urls } from '../../http/urls.js';

const LOGIN_PATH = urls.login();
const LOGOUT_PATH = urls.logout();
const BAD_CREDENTIALS = 'Please enter a correct username and password. Note that both fields are case-sensitive.';

const invalidCredentials = () =>
  new ApiError(401, 'invalid_credentials', 'Unable to log in with the provided credentials.', undefined, { 'WWW-Authenticate': 'Token' });

function shell(deps: AuthRouteDeps, res: Response): PageShell {
  return { title: deps.settings.applicationTitle, cspNonce: res.locals.cspNonce as string | undefined };
}

function sendPage(res: Response, status: number, html: string): void {
  res.status(status);
  res.setHeader('Content-Type', 'text/html; charset=utf-8');
  res.setHeader('Cache-Control', 'no-store');
  res.send(html);
}

/** Requests carrying an API token or JWT have no session (see session.ts): refuse before any password check. */
function requireSessionSupport(req: Request): void {
  if (req.session === undefined) {
    throw badRequest('session_unavailable', 'A browser login cannot carry an Authorization header: send it without one.');
  }
}

/** passport's logIn regenerates the session id (no fixation); then a fresh CSRF secret is issued. */
async function startSession(req: Request, res: Response, account: Account): Promise<string> {
  await new Promise<void>((resolve, reject) => req.logIn(account, (err: unknown) => (err ? reject(err) : resolve())));
  const token = newCsrfToken();
  req.session.csrfToken = token;
  setCsrfCookie(req, res, token);
  return token;
}

function endSession(req: Request, res: Response): Promise<void> {
  res.clearCookie(SESSION_COOKIE, { path: '/', httpOnly: true, sameSite: 'lax', secure: req.secure });
  if (req.session === undefined) return Promise.resolve();
  return new Promise((resolve, reject) => req.session.destroy((err: unknown) => (err ? reject(err) : resolve())));
}

/** Adds its routes to `router`. */
export function sessionRoutes(deps: AuthRouteDeps, router: Router): Router {
  const renderLogin = (req: Request, res: Response, status: number, values: { next: string; username?: string; error?: string }) => {
    // Reuse the browser's token so several open tabs keep working; otherwise issue one.
    const token = csrfCookie(req) ?? newCsrfToken();
    setCsrfCookie(req, res, token);
    sendPage(res, status, loginPage(shell(deps, res), { action: LOGIN_PATH, csrfToken: token, ...values }));
  };

  serve(router, AUTH_ROUTES.login, {
    GET: async (req, res) => {
      const next = safeNextPath(req.query.next);
      if (req.format === 'api') return renderLogin(req, res, 200, { next });
      respond(req, res, 200, {
        detail: 'POST {"username", "password"} as JSON to this URL to start a session.',
        username: req.principal.username,
      });
    },
    POST: async (req, res) => {
      requireSessionSupport(req);
      if (isFormPost(req)) {
        const form = req.body as z.output<typeof formLoginBody>;
        verifyDoubleSubmit(req, form[CSRF_FORM_FIELD] ?? req.get(CSRF_HEADER));
        const next = safeNextPath(form.next);
        const username = form.username ?? '';
        if (username === '' || (form.password ?? '') === '') {
          return renderLogin(req, res, 400, { next, username, error: 'Enter your username and password.' });
        }
        const account = await attemptPasswordLogin(deps, req, res, username);
        if (account === null) return renderLogin(req, res, 400, { next, username, error: BAD_CREDENTIALS });
        await startSession(req, res, account);
        res.redirect(302, next);
        return;
      }
      const body = req.body as z.output<typeof jsonLoginBody>;
      const account = await attemptPasswordLogin(deps, req, res, body.username);
      if (account === null) throw invalidCredentials();
      const csrftoken = await startSession(req, res, account);
      respond(req, res, 200, { username: account.username, csrftoken });
    },
  });

  serve(router, AUTH_ROUTES.logout, {
    GET: async (req, res) => {
      const loggedIn = req.principal.authMethod === 'session';
      if (req.format !== 'api') {
        respond(req, res, 200, { detail: 'POST to this URL to log out.', username: loggedIn ? req.principal.username : null });
        return;
      }
      if (!loggedIn) {
        res.redirect(302, `${LOGIN_PATH}?next=${encodeURIComponent(DEFAULT_AFTER_LOGIN)}`);
        return;
      }
      const token = sessionCsrfToken(req) as string;
      setCsrfCookie(req, res, token);
      sendPage(res, 200, logoutPage(shell(deps, res), { action: LOGOUT_PATH, csrfToken: token, username: req.principal.username }));
    },
    POST: async (req, res) => {
      const form = isFormPost(req);
      let submitted = req.get(CSRF_HEADER);
      if (form) submitted = (req.body as z.output<typeof formLogoutBody> | undefined)?.[CSRF_FORM_FIELD] ?? submitted;
      if (req.principal.authMethod === 'session') {
        verifySessionCsrf(req, submitted);
        deps.logger.info({ reqId: req.requestId, username: req.principal.username }, 'logout');
      }
      await endSession(req, res);
      if (form) {
        res.redirect(302, DEFAULT_AFTER_LOGIN);
        return;
      }
      respond(req, res, 200, { detail: 'Logged out.' });
    },
  });

  return router;
}
