/**
 * A passport instance per auth module (never the process-wide singleton: several services may
 * run in one process). The local strategy checks username + password; the session strategy
 * stores `{id, pwd}` and, on each request, yields the account only while it is active and its
 * password is unchanged since login.
 */
import passport from 'passport';
import { Strategy as LocalStrategy } from 'passport-local';
import type { Account, AccountDirectory } from './accounts.js';
import type { SessionUser } from './session.js';

export const LOCAL_STRATEGY = 'local';

/** One passport instance (passport's Authenticator class). */
export type PassportInstance = passport.Authenticator;

function isSessionUser(value: unknown): value is SessionUser {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as SessionUser).id === 'string' &&
    typeof (value as SessionUser).pwd === 'string'
  );
}

export function createPassport(accounts: AccountDirectory): PassportInstance {
  const instance = new passport.Passport();

  instance.use(
    LOCAL_STRATEGY,
    new LocalStrategy({ usernameField: 'username', passwordField: 'password', session: false }, (username, password, done) => {
      accounts.checkCredentials(username, password).then(
        (result) => (result.ok ? done(null, result.account) : done(null, false)),
        (err: unknown) => done(err),
      );
    }),
  );

  instance.serializeUser((user, done) => {
    const account = user as Account;
    const stored: SessionUser = { id: account.id, pwd: account.passwordStamp };
    done(null, stored);
  });

  instance.deserializeUser((stored: unknown, done: (err: unknown, user?: Account | false) => void) => {
    if (!isSessionUser(stored)) return done(null, false);
    accounts.byId(stored.id).then(
      (account) => {
        const valid = account !== null && account.isActive && account.passwordStamp === stored.pwd;
        done(null, valid ? account : false);
      },
      (err: unknown) => done(err),
    );
  });

  return instance;
}
