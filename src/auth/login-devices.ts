/**
 * Device cookies (OWASP, "Slow Down Online Guessing Attacks with Device Cookies"): every
 * successful password login gives the client a new signed cookie naming the account. A later
 * login to that account presenting it is judged by that cookie's own failures, not by the
 * counters an attacker elsewhere can fill (login-throttle.ts): so nobody can lock a user out of a
 * device they have logged in from before.
 *
 * The cookie holds an HS256 JWT under a key derived from SECRET_KEY for this purpose only (no
 * other token of the service verifies as one): the account's username and a random id, which
 * names the cookie's failure counter. Each account has a cookie of its own (its name is a keyed
 * digest of the username, since usernames may hold characters a cookie name may not), so a browser
 * shared by several people keeps each one's. HttpOnly, SameSite=Lax, Secure over HTTPS, sent only
 * to /api/ paths. A cookie that does not verify, names another account or has expired counts as
 * no cookie: the login is an unknown device's.
 */
import { createHmac, randomUUID } from 'node:crypto';
import type { Request, Response } from 'express';
import jwt from 'jsonwebtoken';
import { z } from 'zod';
import { urls } from '../http/urls.js';

const AUDIENCE = 'login-device';
const COOKIE_PREFIX = 'device_';
const COOKIE_PATH = urls.root();
/** A device is remembered for half a year after its last login from it. */
export const DEVICE_COOKIE_MAX_AGE_S = 180 * 86_400;
/** Longer values are not cookies this service issued: refused before any parsing work. */
const MAX_COOKIE_LENGTH = 1024;

const claimsSchema = z.object({ sub: z.string().min(1), jti: z.string().min(1) });

export class LoginDevices {
  private readonly key: Buffer;

  constructor(secretKey: string) {
    this.key = createHmac('sha256', secretKey).update('cybercom login devices').digest();
  }

  /** The cookie name of `username`'s device cookie. */
  cookieName(username: string): string {
    return COOKIE_PREFIX + createHmac('sha256', this.key).update(`name\0${username}`).digest('hex').slice(0, 20);
  }

  /** The id of the device cookie this request presents for `username`, when it is one this service issued to that account. */
  presented(req: Request, username: string): string | undefined {
    const value = (req.cookies as Record<string, unknown> | undefined)?.[this.cookieName(username)];
    if (typeof value !== 'string' || value.length > MAX_COOKIE_LENGTH) return undefined;
    let payload: unknown;
    try {
      payload = jwt.verify(value, this.key, { algorithms: ['HS256'], audience: AUDIENCE });
    } catch {
      return undefined;
    }
    const claims = claimsSchema.safeParse(payload);
    return claims.success && claims.data.sub === username ? claims.data.jti : undefined;
  }

  /** Gives the client a new device cookie for `username` (after a successful login). */
  issue(req: Request, res: Response, username: string): void {
    const token = jwt.sign({}, this.key, {
      algorithm: 'HS256',
      audience: AUDIENCE,
      subject: username,
      jwtid: randomUUID(),
      expiresIn: DEVICE_COOKIE_MAX_AGE_S,
    });
    res.cookie(this.cookieName(username), token, {
      httpOnly: true,
      sameSite: 'lax',
      secure: req.secure,
      path: COOKIE_PATH,
      maxAge: DEVICE_COOKIE_MAX_AGE_S * 1000,
    });
  }
}
