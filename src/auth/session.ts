/**
 * Browser sessions: express-session with the store in the service database (connect-mongo).
 * Expired sessions are removed by the database itself through a TTL index on `expires` (MongoDB
 * and FerretDB/DocumentDB both run TTL deletes in the background), and a session past its expiry
 * is never loaded even before that delete has run. The index is made at start-up, with the other
 * indexes of the service database, not by the store: the store would make it in a promise that
 * nothing awaits (an unhandled rejection when the database blips during start-up, and a store
 * that stays broken), and its alternative, a periodic sweep, sends unacknowledged (w:0) deletes,
 * which FerretDB answers against the protocol, leaving a pooled connection one reply behind. Cookie
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
import { ensureExpiryIndex } from '../db/expiry-index.js';
import { parseAuthorization } from './authorization-header.js';
import { databaseNotAnswering } from '../db/deadline.js';
import { callbackWithin } from '../lib/deadline.js';

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

/**
 * Bounds the store's calls on a request's path (load, save, touch, destroy) by the database
 * operation deadline: a session store the engine no longer answers fails the request with 503
 * instead of holding it for ever.
 */
function boundStoreCalls(store: MongoStore, deadlineMs: number): void {
  const timedOut = () => databaseNotAnswering(deadlineMs);
  const noop = () => undefined;
  const get = store.get.bind(store);
  const set = store.set.bind(store);
  const touch = store.touch.bind(store);
  const destroy = store.destroy.bind(store);
  store.get = (sid, callback) => get(sid, callbackWithin(deadlineMs, timedOut, callback));
  store.set = (sid, data, callback) => set(sid, data, callbackWithin(deadlineMs, timedOut, callback ?? noop));
  store.touch = (sid, data, callback) => touch(sid, data, callbackWithin(deadlineMs, timedOut, callback ?? noop));
  store.destroy = (sid, callback) => destroy(sid, callbackWithin(deadlineMs, timedOut, callback ?? noop));
}

export async function createSessionParts(
  settings: SessionSettings,
  client: MongoClient,
  databaseName: string,
  /** MONGO_OPERATION_TIMEOUT_MS: how long a request waits for the session store. */
  deadlineMs: number,
): Promise<SessionParts> {
  await ensureExpiryIndex(client.db(databaseName).collection(SESSION_COLLECTION));
  const store = MongoStore.create({
    client,
    dbName: databaseName,
    collectionName: SESSION_COLLECTION,
    ttl: settings.sessionMaxAgeSeconds,
    autoRemove: 'disabled',
    touchAfter: TOUCH_AFTER_SECONDS,
  });
  boundStoreCalls(store, deadlineMs);
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
      // service; the store has no timer, so only its own set-up is waited for.
      await store.collectionP.catch(() => undefined);
    },
  };
}
