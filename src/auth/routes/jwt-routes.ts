/**
 * JWT endpoints for scripts (simplejwt's URLs and bodies): /token/ trades a username and password
 * for `{access, refresh}`, /token/refresh/ a refresh token for `{access, refresh}` — the refresh
 * token is single use and rotated (simplejwt's ROTATE_REFRESH_TOKENS with its blacklist), a reused
 * one revokes its whole login — and /token/verify/ answers 200 `{}` for a token that is still
 * good, 401 `token_not_valid` otherwise.
 */
import type { Router } from 'express';
import type { z } from 'zod';
import { ApiError } from '../../errors.js';
import { respond } from '../../http/respond.js';
import type { Account } from '../accounts.js';
import { tokenNotValid, type JwtType } from '../jwt.js';
import { accountForJwt } from '../jwt-accounts.js';
import type { AuthRouteDeps } from './deps.js';
import { attemptPasswordLogin } from './password-login.js';
import { serve } from '../../http/route-table.js';
import { AUTH_ROUTES, type obtainBody, type refreshBody, type verifyBody } from './route-table.js';

const noActiveAccount = () =>
  new ApiError(401, 'invalid_credentials', 'No active account found with the given credentials.', undefined, {
    'WWW-Authenticate': 'Token',
  });

/** Adds its routes to `router`. */
export function jwtRoutes(deps: AuthRouteDeps, router: Router): Router {
  /** The token's account, if it still exists, is active and has the password the token was issued for. */
  const activeAccountFor = async (token: string, type?: JwtType): Promise<Account> => {
    const account = await accountForJwt(deps.jwt, deps.accounts, token, type);
    if (!account.isActive) throw tokenNotValid('The user of this token is inactive.');
    return account;
  };

  serve(router, AUTH_ROUTES.token, {
    POST: async (req, res) => {
      const body = req.body as z.output<typeof obtainBody>;
      const account = await attemptPasswordLogin(deps, req, res, body.username);
      if (account === null) throw noActiveAccount();
      respond(req, res, 200, { access: deps.jwt.issue('access', account), refresh: deps.jwt.issue('refresh', account) });
    },
  });

  serve(router, AUTH_ROUTES.refresh, {
    POST: async (req, res) => {
      const body = req.body as z.output<typeof refreshBody>;
      const account = await activeAccountFor(body.refresh, 'refresh');
      const claims = deps.jwt.verify(body.refresh, 'refresh');
      await deps.refreshLedger.spend(claims);
      respond(req, res, 200, {
        access: deps.jwt.issue('access', account),
        refresh: deps.jwt.issue('refresh', account, claims.fam ?? claims.jti),
      });
    },
  });

  serve(router, AUTH_ROUTES.verify, {
    POST: async (req, res) => {
      const body = req.body as z.output<typeof verifyBody>;
      await activeAccountFor(body.token);
      const claims = deps.jwt.verify(body.token);
      if (claims.token_type === 'refresh') await deps.refreshLedger.assertUsable(claims);
      respond(req, res, 200, {});
    },
  });

  return router;
}
