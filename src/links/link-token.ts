/**
 * Signed links: a token that lets whoever holds the URL make one GET, of one path and query, as
 * the user who asked for it, until it expires or that user's credentials change (it carries their
 * credentials stamp, src/auth/credentials-stamp.ts). The token is an HS256 JWT under a key derived
 * from SECRET_KEY for this purpose only, so no other token of the service (a login JWT, a
 * session) verifies as a link and no link verifies as one of them.
 */
import { createHmac } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { z } from 'zod';
import { ApiError } from '../errors.js';

const AUDIENCE = 'signed-link';

/** Longer strings are not links we issued: refused before any parsing work. */
const MAX_TOKEN_LENGTH = 2048;

export interface LinkGrant {
  userId: string;
  /** Path and query exactly as the link's URL carries them, without the `link` parameter. */
  path: string;
  /** The user's credentials stamp when the link was made. */
  credentials: string;
}

/** Links made before they carried a credentials stamp (`crd`) cannot be checked, so are not valid. */
const claimsSchema = z.object({ sub: z.string().min(1), pth: z.string().min(1), crd: z.string().min(1), exp: z.number() });

export const linkNotValid = (message: string): ApiError =>
  new ApiError(401, 'link_not_valid', message, undefined, { 'WWW-Authenticate': 'Token' });

export class LinkSigner {
  private readonly key: Buffer;

  constructor(secretKey: string) {
    this.key = createHmac('sha256', secretKey).update('cybercom signed links').digest();
  }

  sign(grant: LinkGrant, expiresInSeconds: number): { token: string; expires: Date } {
    const token = jwt.sign({ pth: grant.path, crd: grant.credentials }, this.key, {
      algorithm: 'HS256',
      audience: AUDIENCE,
      subject: grant.userId,
      expiresIn: expiresInSeconds,
    });
    const { exp } = jwt.decode(token) as { exp: number };
    return { token, expires: new Date(exp * 1000) };
  }

  /** The grant of a token this service signed and that has not expired; else the 401 `link_not_valid`. */
  verify(token: string): LinkGrant {
    if (token.length > MAX_TOKEN_LENGTH) throw linkNotValid('The link is not valid.');
    let payload: unknown;
    try {
      payload = jwt.verify(token, this.key, { algorithms: ['HS256'], audience: AUDIENCE });
    } catch (err) {
      if (err instanceof jwt.TokenExpiredError) throw linkNotValid('The link has expired.');
      throw linkNotValid('The link is not valid.');
    }
    const claims = claimsSchema.safeParse(payload);
    if (!claims.success) throw linkNotValid('The link is not valid.');
    return { userId: claims.data.sub, path: claims.data.pth, credentials: claims.data.crd };
  }
}
