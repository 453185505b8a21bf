/**
 * Works out who is calling, in the contract's order: `Authorization: Bearer <jwt>`, then
 * `Authorization: Token <key>`, then the session cookie. A credential that is present but wrong
 * is a 401 (never a silent fall-back to anonymous); an inactive account is refused the same way.
 * Other Authorization schemes (e.g. Basic, used by proxies) are ignored, as in DRF.
 */
import type { RequestHandler } from 'express';
import { ApiError } from '../errors.js';
import type { PassportInstance } from './passport-setup.js';
import { toPrincipal, type Account, type AccountDirectory } from './accounts.js';
import { tokenNotValid, type JwtIssuer } from './jwt.js';
import { accountForJwt } from './jwt-accounts.js';
import { parseAuthorization } from './authorization-header.js';

const invalidToken = (message: string): ApiError => new ApiError(401, 'invalid_token', message, undefined, { 'WWW-Authenticate': 'Token' });
const inactiveUser = (): ApiError =>
  new ApiError(401, 'user_inactive', 'User account is disabled.', undefined, { 'WWW-Authenticate': 'Token' });

/** API token keys are 40 hex characters; anything much longer is not worth a query. */
const MAX_TOKEN_KEY_LENGTH = 256;

export interface AuthenticationDeps {
  accounts: AccountDirectory;
  jwt: JwtIssuer;
  /** This module's own passport instance, with the session strategy's (de)serializers set. */
  passport: PassportInstance;
}

async function accountFromJwt(deps: AuthenticationDeps, credentials: string[]): Promise<Account> {
  if (credentials.length !== 1) throw tokenNotValid('Invalid Bearer header: expected exactly one token.');
  return accountForJwt(deps.jwt, deps.accounts, credentials[0] as string, 'access');
}

async function accountFromApiToken(deps: AuthenticationDeps, credentials: string[]): Promise<Account> {
  const key = credentials[0];
  if (credentials.length !== 1 || key === undefined || key.length > MAX_TOKEN_KEY_LENGTH) {
    throw invalidToken('Invalid Token header: expected "Token <key>".');
  }
  const account = await deps.accounts.byTokenKey(key);
  if (account === null) throw invalidToken('Invalid token.');
  return account;
}

export function authenticationMiddleware(deps: AuthenticationDeps): RequestHandler {
  const initialize = deps.passport.initialize();
  const sessionAuth = deps.passport.authenticate('session') as RequestHandler;

  return (req, res, next) => {
    const { scheme, credentials } = parseAuthorization(req);
    if (scheme !== null) {
      const lookup = scheme === 'bearer' ? accountFromJwt(deps, credentials) : accountFromApiToken(deps, credentials);
      lookup.then(
        (account) => {
          if (!account.isActive) return next(inactiveUser());
          req.principal = toPrincipal(account, scheme === 'bearer' ? 'jwt' : 'token');
          next();
        },
        (err: unknown) => next(err),
      );
      return;
    }
    initialize(req, res, (err?: unknown) => {
      if (err) return next(err);
      sessionAuth(req, res, (sessionErr?: unknown) => {
        if (sessionErr) return next(sessionErr);
        // The deserializer only yields active accounts whose password has not changed since login.
        const account = req.user as Account | undefined;
        if (account !== undefined) req.principal = toPrincipal(account, 'session');
        next();
      });
    });
  };
}
