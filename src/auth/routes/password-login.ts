/**
 * One password login attempt, shared by the session login (JSON and form, which is also the admin
 * site's login) and the JWT endpoint: the throttle first, told whether the client presents a
 * device cookie of this account (so the attempt counts from its start), then passport's local
 * strategy, then the outcome counted and logged, and on success a new device cookie. An attempt
 * the throttle delays is judged all the same, one such at a time in this process: the right
 * password gets in, a wrong one is answered 429 instead of 401, and one whose turn does not come
 * in time is answered 429 unjudged (login-throttle.ts). The password is never logged; the username
 * and address are.
 */
import type { Request, Response } from 'express';
import type { Account } from '../accounts.js';
import { throttled } from '../login-throttle.js';
import { LOCAL_STRATEGY } from '../passport-setup.js';
import type { AuthRouteDeps } from './deps.js';
import { clientAddress } from './route-helpers.js';

function runLocalStrategy(deps: AuthRouteDeps, req: Request, res: Response): Promise<Account | null> {
  return new Promise((resolve, reject) => {
    const handler = deps.passport.authenticate(LOCAL_STRATEGY, { session: false }, (err: unknown, user?: unknown) => {
      if (err) reject(err);
      else resolve(user ? (user as Account) : null);
    }) as (req: Request, res: Response, next: (err?: unknown) => void) => void;
    handler(req, res, reject);
  });
}

/** The account on success, null on bad credentials; throws 429 for bad credentials while throttled. */
export async function attemptPasswordLogin(deps: AuthRouteDeps, req: Request, res: Response, username: string): Promise<Account | null> {
  const ip = clientAddress(req);
  const attempt = await deps.throttle.begin(username, ip, deps.devices.presented(req, username));
  const knownDevice = attempt.knownDevice;
  const delayed = attempt.retryAfterMs > 0;
  const endTurn = delayed ? await deps.throttle.delayedChecks.enter() : undefined;
  if (delayed && endTurn === undefined) {
    await attempt.abandoned().catch(() => undefined);
    deps.logger.info(
      { reqId: req.requestId, username, ip, knownDevice, path: req.originalUrl },
      'login not judged: delayed attempts queued',
    );
    throw throttled(attempt.retryAfterMs);
  }
  let account: Account | null;
  try {
    account = await runLocalStrategy(deps, req, res);
  } catch (err) {
    await attempt.abandoned().catch(() => undefined);
    throw err;
  } finally {
    endTurn?.();
  }
  if (account === null) {
    const waitMs = await attempt.failed();
    deps.logger.info({ reqId: req.requestId, username, ip, knownDevice, delayed, path: req.originalUrl }, 'login failed');
    // The wait this failure brings, which is at least the one the attempt was delayed by.
    if (delayed) throw throttled(Math.max(waitMs, attempt.retryAfterMs));
    return null;
  }
  await attempt.succeeded();
  deps.devices.issue(req, res, account.username);
  deps.logger.info({ reqId: req.requestId, username, ip, knownDevice, delayed, path: req.originalUrl }, 'login succeeded');
  return account;
}
