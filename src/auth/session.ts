/**
 * Browser sessions: express-session with the store in the service database (connect-mongo).
 * Expired sessions are removed by the database itself through a TTL index on `expires`
 * (`autoRemove: 'native'`; MongoDB and FerretDB/DocumentDB both run TTL deletes in the background),
 * and a session past its expiry is never loaded even before that delete has run. Cookie
 * `sessionid`: HttpOnly, SameSite=Lax, Secure whenever the request came over HTTPS (`secure:
 * 'auto'` follows express's trust-proxy setting). Anonymous requests never create a session
 * (saveUninitialized: false), and requests with an API token or JWT skip the session entirely, so
 * scripts cost the store nothing.
 */
import type { RequestHandler } from 'express';
import cookieParser from 'cookie-parser';
import session, { type SessionOptions } from 'express-session';
import MongoStore from 'connect-mongo';
import type { MongoClient } from 'mongodb';
import { parseAuthorization } from './authorization-header.js';

export const SESSION_COOKIE = 'sessionid';
export const SESSION_COLLECTION = 'sessions';
/** An unchanged session is re-saved (to push its expiry) at most this often, not on every request. */
const TOUCH_AFTER_SECONDS = 300;

/** What this service keeps in a session (passport adds `passport.user`). */
export interface SessionUser {
  id: string;
  /** The account's password stamp at login (see accounts.ts). */
  pwd: string;
}

declare module 'express-session' {
  interface SessionData {
    /** The CSRF secret issued at login; also sent as the `csrftoken` cookie. */
    csrfToken?: string;
    passport?: { user?: SessionUser };
  }
}

export interface SessionParts {
  /** cookie parsing + express-session. */
  handler: RequestHandler;
  /** The same store, cookie name, secret and cookie flags, for the admin site's session. */
  options: SessionOptions;
  /** Waits for the store's set-up (the driver client belongs to the service and stays open). */
  stop(): Promise<void>;
}

export interface SessionSettings {
  secretKey: string;
  sessionMaxAgeSeconds: number;
}

export function createSessionParts(settings: SessionSettings, client: MongoClient, databaseName: string): SessionParts {
  const store = MongoStore.create({
    client,
    dbName: databaseName,
    collectionName: SESSION_COLLECTION,
    ttl: settings.sessionMaxAgeSeconds,
    autoRemove: 'native',
    touchAfter: TOUCH_AFTER_SECONDS,
  });
  const options: SessionOptions = {
    name: SESSION_COOKIE,
    secret: settings.secretKey,
    store,
    resave: false,
    saveUninitialized: false,
    rolling: false,
    cookie: {
      httpOnly: true,
      sameSite: 'lax',
      secure: 'auto',
      path: '/',
      maxAge: settings.sessionMaxAgeSeconds * 1000,
    },
  };
  const parseCookies = cookieParser();
  const sessions = session(options);
  const handler: RequestHandler = (req, res, next) => {
    // Token and JWT requests never use the session: skip cookie parsing, session loading and
    // id generation for them (the data-store benchmark is thousands of these per second).
    if (parseAuthorization(req).scheme !== null) return next();
    parseCookies(req, res, (err?: unknown) => (err ? next(err) : sessions(req, res, next)));
  };
  return {
    handler,
    options,
    async stop() {
      // MongoStore.close() would also close the shared driver client, which belongs to the
      // service; with native expiry the store has no timer, so only its set-up (the TTL index)
      // is waited for, so nothing of it runs on a closed client.
      await store.collectionP.catch(() => undefined);
    },
  };
}
