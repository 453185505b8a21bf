/**
 * JSON Web Tokens for scripts (djangorestframework-simplejwt's shape): HS256 with SECRET_KEY,
 * a short-lived `access` token used as `Authorization: Bearer`, and a longer `refresh` token
 * that only buys new access tokens. Claims: token_type, user_id, jti, iat, exp and `pwd`, the
 * account's password stamp, so a password change invalidates tokens issued before it. Refresh
 * tokens also carry `fam`, their family: one login and every refresh token rotated from it (see
 * refresh-ledger.ts for single use and reuse detection).
 */
import { randomUUID } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { ApiError } from '../errors.js';

export type JwtType = 'access' | 'refresh';

export interface JwtClaims {
  token_type: JwtType;
  user_id: string;
  jti: string;
  pwd: string;
  iat: number;
  exp: number;
  /** Refresh tokens: the login they descend from (absent on tokens issued before rotation existed). */
  fam?: string;
}

export interface JwtSettings {
  secretKey: string;
  accessTtlSeconds: number;
  refreshTtlSeconds: number;
}

export const tokenNotValid = (message = 'Token is invalid or expired.'): ApiError =>
  new ApiError(401, 'token_not_valid', message, undefined, { 'WWW-Authenticate': 'Bearer realm="api"' });

/** Longer strings are not tokens we issued: refuse them before any parsing work. */
const MAX_TOKEN_LENGTH = 4096;

export class JwtIssuer {
  constructor(private readonly settings: JwtSettings) {}

  /** `family`: for a refresh token rotated from another, that token's family; a login starts a new one. */
  issue(type: JwtType, account: { id: string; passwordStamp: string }, family?: string): string {
    const ttl = type === 'access' ? this.settings.accessTtlSeconds : this.settings.refreshTtlSeconds;
    const claims = {
      token_type: type,
      user_id: account.id,
      jti: randomUUID(),
      pwd: account.passwordStamp,
      ...(type === 'refresh' ? { fam: family ?? randomUUID() } : {}),
    };
    return jwt.sign(claims, this.settings.secretKey, {
      algorithm: 'HS256',
      expiresIn: ttl,
    });
  }

  /**
   * Checks signature, expiry and shape; `expected` restricts the token type. Any failure is the
   * 401 `token_not_valid` (a bad token is never treated as "anonymous").
   */
  verify(token: string, expected?: JwtType): JwtClaims {
    if (token.length === 0 || token.length > MAX_TOKEN_LENGTH) throw tokenNotValid();
    let payload: unknown;
    try {
      payload = jwt.verify(token, this.settings.secretKey, { algorithms: ['HS256'] });
    } catch (err) {
      throw tokenNotValid(err instanceof jwt.TokenExpiredError ? 'Token has expired.' : 'Token is invalid or expired.');
    }
    if (!isClaims(payload)) throw tokenNotValid('Token has no valid claims.');
    if (expected !== undefined && payload.token_type !== expected)
      throw tokenNotValid(`Token has the wrong type: expected ${expected === 'access' ? 'an access' : 'a refresh'} token.`);
    return payload;
  }
}

function isClaims(value: unknown): value is JwtClaims {
  if (typeof value !== 'object' || value === null) return false;
  const c = value as Record<string, unknown>;
  return (
    (c.token_type === 'access' || c.token_type === 'refresh') &&
    typeof c.user_id === 'string' &&
    typeof c.jti === 'string' &&
    typeof c.pwd === 'string' &&
    typeof c.exp === 'number' &&
    typeof c.iat === 'number' &&
    (c.fam === undefined || typeof c.fam === 'string')
  );
}
