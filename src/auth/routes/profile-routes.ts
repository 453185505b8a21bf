/**
 * /user/: the caller's profile. GET shows it (with the API token's prefix — the whole key only
 * when this request created the token — and the JWT endpoints as absolute URLs); POST changes
 * it: `{"auth-token": "update"}` rotates the token, `{"password", "current_password"}` changes
 * the password (and rotates the token), `first_name`, `last_name`, `email` update the profile.
 * Answers with the profile as it is afterwards, with the new key when the token was rotated.
 */
import { type Router, type Request } from 'express';
import { z } from 'zod';
import { badRequest, unauthenticated } from '../../errors.js';
import { absoluteUrl } from '../../http/base-url.js';
import { respond } from '../../http/respond.js';
import { throttled } from '../login-throttle.js';
import { isAuthenticated } from '../principal.js';
import type { ProfileChanges, ProfileLinks } from '../profile.js';
import type { AuthRouteDeps } from './deps.js';
import { clientAddress } from './route-helpers.js';
import { serve } from '../../http/route-table.js';
import { AUTH_ROUTES, PROFILE_SHAPE, type profileBody } from './route-table.js';
import { urls } from '../../http/urls.js';

function links(req: Request): ProfileLinks {
  return {
    obtainToken: absoluteUrl(req, urls.token()),
    refreshToken: absoluteUrl(req, urls.tokenRefresh()),
    verifyToken: absoluteUrl(req, urls.tokenVerify()),
  };
}

function requireUserId(req: Request): string {
  if (!isAuthenticated(req.principal) || req.principal.userId === null) throw unauthenticated();
  return req.principal.userId;
}

function toChanges(body: z.output<typeof profileBody>): ProfileChanges {
  if (Object.keys(body).length === 0) throw badRequest('invalid_body', `Nothing to change: send ${PROFILE_SHAPE}.`);
  if ((body.password === undefined) !== (body.current_password === undefined)) {
    const missing = body.password === undefined ? 'password' : 'current_password';
    throw badRequest('invalid_field', `Field "${missing}": a password change needs both "password" and "current_password".`, {
      fields: [{ field: missing, message: 'This field is required.' }],
    });
  }
  const changes: ProfileChanges = {};
  if (body['auth-token'] !== undefined) changes.rotateToken = true;
  if (body.password !== undefined && body.current_password !== undefined) {
    changes.password = { current: body.current_password, next: body.password };
  }
  if (body.first_name !== undefined) changes.first_name = body.first_name;
  if (body.last_name !== undefined) changes.last_name = body.last_name;
  if (body.email !== undefined) changes.email = body.email.trim();
  return changes;
}

/** Adds its routes to `router`. */
export function profileRoutes(deps: AuthRouteDeps, router: Router): Router {
  serve(router, AUTH_ROUTES.profile, {
    GET: async (req, res) => {
      const userId = requireUserId(req);
      respond(req, res, 200, await deps.profiles.read(userId, links(req)));
    },
    POST: async (req, res) => {
      const userId = requireUserId(req);
      const changes = toChanges(req.body as z.output<typeof profileBody>);
      const username = req.principal.username ?? '';
      // A wrong current password is a guess at this account's password: it counts against this
      // account's own counters only, never against the address other accounts log in from.
      const ip = clientAddress(req);
      // Delayed by those counters, the right current password still counts; a wrong one is a 429.
      const waitMs = changes.password === undefined ? 0 : await deps.throttle.delayMs(username, ip, 'own-account');
      const result = await deps.profiles.update(userId, changes, async () => {
        const after = await deps.throttle.recordFailure(username, ip, 'own-account');
        if (waitMs > 0) throw throttled(Math.max(after, waitMs));
      });
      if (result.newPasswordStamp !== undefined) {
        deps.logger.info({ reqId: req.requestId, username }, 'password changed');
        // Keep this browser session; every other session and every issued JWT is now void.
        const stored = req.principal.authMethod === 'session' ? req.session.passport?.user : undefined;
        if (stored !== undefined) stored.pwd = result.newPasswordStamp;
      }
      if (changes.rotateToken === true) deps.logger.info({ reqId: req.requestId, username }, 'API token rotated');
      respond(req, res, 200, await deps.profiles.read(userId, links(req), result.newTokenKey));
    },
  });
  return router;
}
