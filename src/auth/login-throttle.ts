/**
 * Slows password guessing without keeping anyone who knows their password out: neither a spray of
 * names from the address everyone shares nor a flood of guesses at one account turns the right
 * password away, from any client (OWASP's device cookies for browsers that logged in before, and
 * for every other client the rule that the counters slow only wrong passwords).
 *
 * A login that presents a valid device cookie for the account it names is judged by that cookie's
 * own failures only: while it has fewer than `maxFailures` within `windowSeconds`, no other
 * counter applies. A cookie that has failed that often is no longer trusted, and its logins are
 * judged as an unknown device's.
 *
 * Logins from unknown devices are judged by three counters, each with its free failures and then
 * growing delays (login-delays.ts):
 * - one account from one client address (`maxFailures`): what a guesser meets first;
 * - one account from all addresses together (`accountMaxFailures`): guessing spread over many
 *   addresses;
 * - one address over all accounts (`addressMaxFailures`, far higher): one address trying many
 *   names.
 * An attempt a counter delays is still judged: its password is checked like any other (so it
 * takes the time any login takes, and the answer tells nothing a wrong name's would not). The
 * right password gets in; a wrong one counts as a failure like any other and is answered 429,
 * with the Retry-After its own failure brings, instead of 401. So a guesser who goes on is slowed
 * more and more (every guess answered 429 once the waits reach the window), each guess costs it a
 * full password check, and it cannot make the right password fail for anyone. A login let in
 * while delayed leaves the counters as they are (the guesser's delays go on); one that was not
 * delayed clears the account's counters it was judged by.
 *
 * Attempts count from the moment they start (`begin`), not when their slow password check ends:
 * otherwise many simultaneous guesses would all pass the check before the first failure is
 * recorded. An attempt in flight holds one place under each counter until it ends.
 *
 * The counts live in the service database (one document per counter), so the limits hold across
 * every API process and replica. Taking a place is one atomic update that returns the document
 * as it is afterwards: each of many simultaneous attempts, in whichever process, sees the places
 * taken before its own, and the ones beyond a limit are judged delayed. A place whose process
 * died before giving it back lapses after IN_FLIGHT_LAPSE_MS. Documents expire (TTL index) once
 * nothing in them can matter any more. An operator can clear an account's or an address's
 * failures at once (`clear`: ops/clear-login-failures and the admin site's user page).
 */
import { randomUUID } from 'node:crypto';
import { MongoServerError, type Collection, type Db, type UpdateFilter } from 'mongodb';
import type { Settings } from '../config/settings.js';
import { tooManyRequests } from '../errors.js';
import { ensureExpiryIndex } from '../db/expiry-index.js';
import { retryOnDeadlock } from '../db/deadlock-retry.js';
import { deviceTrusted, KEPT_BEYOND_FREE, lockedForMs, type FailureCounts, type FailureLimit } from './login-delays.js';
import { TurnGate } from './turn-gate.js';

export interface ThrottleSettings {
  /** Free failures for one account from one client address, and for one device cookie. */
  maxFailures: number;
  /** For one account from all addresses together. */
  accountMaxFailures: number;
  /** From one address over all accounts. */
  addressMaxFailures: number;
  windowSeconds: number;
}

/** Which counters an attempt is judged by: a login, or a password check of the caller's own account. */
export type AttemptScope = 'login' | 'own-account';

interface Counter {
  key: string;
  limit: FailureLimit;
}

export const LOGIN_ATTEMPTS_COLLECTION = 'auth_login_attempts';

/** Usernames and device ids are stored capped: a megabyte-long "username" must not cost a megabyte. */
const MAX_KEY_LENGTH = 200;
/** A password check ends within a second; a place held longer belongs to a process that died. */
const IN_FLIGHT_LAPSE_MS = 60_000;
/** Places kept per key: beyond this many simultaneous attempts the oldest places are dropped. */
const MAX_IN_FLIGHT_KEPT = 1000;

interface InFlight {
  id: string;
  at: Date;
}

export interface AttemptCounts extends FailureCounts {
  _id: string;
  inFlight?: InFlight[];
  expires: Date;
}

/** One login attempt between `begin` and its outcome; each method may be called once. */
export interface LoginAttempt {
  /** Whether the attempt is judged as coming from a device the account has logged in from. */
  readonly knownDevice: boolean;
  /**
   * The wait a counter asks of this attempt (0: none). A delayed attempt is still judged: when its
   * password is wrong the caller answers `throttled(retryAfterMs)` instead of 401.
   */
  readonly retryAfterMs: number;
  /** Counts the failure; returns the wait the attempt's counters now ask (a delayed attempt's Retry-After). */
  failed(): Promise<number>;
  succeeded(): Promise<void>;
  /** Ended without an outcome (an error before the password was judged). */
  abandoned(): Promise<void>;
}

/** What an attempt's place under its counters is judged by: the wait it must make (0: none). */
type Judge = (counts: AttemptCounts, pendingBefore: number, limit: FailureLimit, now: number) => number;

/** An unknown device's attempt waits out every counter's delay. */
const waitOutDelays: Judge = lockedForMs;
/** A device cookie's attempt is refused trust (any non-zero answer) once the cookie has failed too often. */
const refuseUntrusted: Judge = (counts, pendingBefore, limit, now) => (deviceTrusted(counts, pendingBefore, limit, now) ? 0 : 1);

/**
 * Every write touches one document (one counter), in the same order (account and address, account,
 * address), so writes never wait on each other in a cycle. PostgreSQL under FerretDB may still report a
 * deadlock under heavy contention; nothing was written then, and the write runs again.
 */
function retried<T>(operation: () => Promise<T>): Promise<T> {
  return retryOnDeadlock(operation);
}

/** The 429 answer to a wrong password while a counter delays its attempts. */
export function throttled(retryAfterMs: number): Error {
  return tooManyRequests(
    'Wrong credentials, after too many failed attempts: wrong ones are slowed for a while. Try again later.',
    retryAfterMs / 1000,
  );
}

/** What an operator clears: every counter of an account (from any address), of an address, or both. */
export interface ClearTarget {
  username?: string;
  address?: string;
}

/** The throttle with the installation's limits (LOGIN_* settings) over the service database `db`. */
export function loginThrottleFor(
  db: Db,
  settings: Pick<Settings, 'loginMaxFailures' | 'loginAccountMaxFailures' | 'loginAddressMaxFailures' | 'loginWindowSeconds'>,
): LoginThrottle {
  return new LoginThrottle(db, {
    maxFailures: settings.loginMaxFailures,
    accountMaxFailures: settings.loginAccountMaxFailures,
    addressMaxFailures: settings.loginAddressMaxFailures,
    windowSeconds: settings.loginWindowSeconds,
  });
}

/** An IPv4 address as a dual-stack socket reports it too (`::ffff:` prefix), and the other way round. */
function addressVariants(address: string): string[] {
  if (/^\d{1,3}(\.\d{1,3}){3}$/.test(address)) return [address, `::ffff:${address}`];
  const mapped = /^::ffff:(\d{1,3}(\.\d{1,3}){3})$/i.exec(address);
  return mapped?.[1] === undefined ? [address] : [mapped[1], address];
}

const escapeRegex = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Password checks of delayed attempts run one at a time in a process, each waiting at most this
 * long for its turn. A delayed attempt is still judged, so that the right password gets in
 * during a flood; judging costs a password hash (a deliberate tenth of a second of CPU or so), and
 * a flood of wrong guesses judged side by side would hold every core. One at a time leaves the
 * other cores to the service; an attempt whose turn does not come in time is answered 429
 * without being judged, as every delayed attempt once was.
 */
const DELAYED_CHECKS_AT_ONCE = 1;
const DELAYED_CHECK_MAX_WAIT_MS = 5_000;

export class LoginThrottle {
  private readonly counts: Collection<AttemptCounts>;
  /** Turns at judging a delayed attempt (see DELAYED_CHECKS_AT_ONCE). */
  readonly delayedChecks = new TurnGate(DELAYED_CHECKS_AT_ONCE, DELAYED_CHECK_MAX_WAIT_MS);

  constructor(
    private readonly db: Db,
    private readonly settings: ThrottleSettings,
    private readonly now: () => number = Date.now,
  ) {
    this.counts = db.collection<AttemptCounts>(LOGIN_ATTEMPTS_COLLECTION);
  }

  /** The TTL index that removes keys with nothing left to count. */
  async init(): Promise<void> {
    await ensureExpiryIndex(this.db.collection(LOGIN_ATTEMPTS_COLLECTION));
  }

  /**
   * The counters an attempt for `username` from `ip` on an unknown device is judged by. Names are
   * compared without case; a name that does not exist gets counters like any other, so an answer
   * never tells whether it exists.
   */
  private counters(username: string, ip: string, scope: AttemptScope): Counter[] {
    const name = username.toLowerCase().slice(0, MAX_KEY_LENGTH);
    const address = ip.slice(0, MAX_KEY_LENGTH);
    const { windowSeconds } = this.settings;
    const own: Counter[] = [
      { key: `ua:${JSON.stringify([name, address])}`, limit: { maxFailures: this.settings.maxFailures, windowSeconds } },
      { key: `u:${name}`, limit: { maxFailures: this.settings.accountMaxFailures, windowSeconds } },
    ];
    if (scope === 'own-account') return own;
    return [...own, { key: `ip:${address}`, limit: { maxFailures: this.settings.addressMaxFailures, windowSeconds } }];
  }

  /** The one counter of a device cookie's logins (its id is unique to one cookie and one user). */
  private deviceCounter(device: string): Counter {
    const { maxFailures, windowSeconds } = this.settings;
    return { key: `d:${device.slice(0, MAX_KEY_LENGTH)}`, limit: { maxFailures, windowSeconds } };
  }

  /** A key is kept while a failure in it can still count, or a place in it is held. */
  private expiry(): Date {
    return new Date(this.now() + this.settings.windowSeconds * 1000 + IN_FLIGHT_LAPSE_MS);
  }

  private live(places: InFlight[] | undefined): InFlight[] {
    const cutoff = this.now() - IN_FLIGHT_LAPSE_MS;
    return (places ?? []).filter((p) => p.at.getTime() > cutoff);
  }

  /**
   * One atomic change of a key's document, returning it as it is afterwards. A new key's document
   * is inserted on its own first (a second insert of it fails on the unique _id and is ignored):
   * an upsert is not enough, because simultaneous upserts of one new document each replace the
   * other's on FerretDB, losing the places taken.
   */
  private async modify(key: string, update: UpdateFilter<AttemptCounts>): Promise<AttemptCounts> {
    for (let attempt = 1; ; attempt += 1) {
      const doc = await retried(() => this.counts.findOneAndUpdate({ _id: key }, update, { returnDocument: 'after' }));
      if (doc !== null) return doc;
      if (attempt >= 3) throw new Error(`login throttle: the document of ${key} vanished as it was created`);
      await this.counts.insertOne({ _id: key, expires: this.expiry() }).catch((err: unknown) => {
        if (!(err instanceof MongoServerError && err.code === 11000)) throw err;
      });
    }
  }

  /** The wait the counters of this scope ask of an unknown device's attempt now (0: none). */
  async delayMs(username: string, ip: string, scope: AttemptScope = 'login'): Promise<number> {
    const counters = this.counters(username, ip, scope);
    const docs = await this.counts.find({ _id: { $in: counters.map((c) => c.key) } }).toArray();
    const now = this.now();
    return Math.max(
      0,
      ...counters.map((c) => {
        const doc = docs.find((d) => d._id === c.key);
        return doc === undefined ? 0 : lockedForMs(doc, this.live(doc.inFlight).length, c.limit, now);
      }),
    );
  }

  /**
   * Clears the failures of an account (its counters from every address) and of an address (its
   * counter over all accounts, and each account's from it). Device cookies' counters are left:
   * a device that failed too often is judged as an unknown one, whose right password gets in.
   * Returns how many counters had failures.
   */
  async clear(target: ClearTarget): Promise<number> {
    const keys: (string | RegExp)[] = [];
    if (target.username !== undefined) {
      const name = target.username.toLowerCase().slice(0, MAX_KEY_LENGTH);
      keys.push(`u:${name}`, new RegExp(`^${escapeRegex(`ua:${JSON.stringify([name]).slice(0, -1)},`)}`));
    }
    for (const variant of target.address === undefined ? [] : addressVariants(target.address)) {
      const address = variant.slice(0, MAX_KEY_LENGTH);
      keys.push(`ip:${address}`, new RegExp(`^ua:\\[.*,${escapeRegex(`${JSON.stringify(address)}]`)}$`));
    }
    if (keys.length === 0) return 0;
    const result = await retried(() =>
      this.counts.updateMany({ $or: keys.map((key) => ({ _id: key })), 'failures.0': { $exists: true } } as never, {
        $set: { failures: [] },
      }),
    );
    return result.modifiedCount;
  }

  /**
   * Takes a place for this login attempt and holds it until the handle says how it ended. `device`
   * is the id of a valid device cookie issued to this very account (login-devices.ts), if the
   * client presented one. A delayed attempt holds no place: it is judged like any other and tells
   * its wait in `retryAfterMs`; its failure counts, a success clears nothing.
   */
  async begin(username: string, ip: string, device?: string): Promise<LoginAttempt> {
    if (device !== undefined) {
      const counter = this.deviceCounter(device);
      const onDevice = await this.hold([counter], refuseUntrusted);
      if (onDevice.waitMs === 0) {
        return this.attempt(true, 0, onDevice.release, {
          failed: () => this.recordFailureOn([counter]),
          succeeded: () => this.clearFailures([counter]),
        });
      }
      await onDevice.release();
    }
    const counters = this.counters(username, ip, 'login');
    const held = await this.hold(counters, waitOutDelays);
    if (held.waitMs > 0) {
      await held.release();
      const nothing = (): Promise<void> => Promise.resolve();
      return this.attempt(false, held.waitMs, nothing, {
        failed: () => this.recordFailureOn(counters),
        // The guesser's delays go on: a right password let in must not hand it new free failures.
        succeeded: nothing,
      });
    }
    return this.attempt(false, 0, held.release, {
      failed: () => this.recordFailureOn(counters),
      // Not the address's counter: otherwise one valid account would let an attacker reset it at will.
      succeeded: () => this.clearFailures(this.counters(username, ip, 'own-account')),
    });
  }

  /**
   * Takes one place under each counter, in order, until `judge` asks for a wait (the places taken
   * are then still held: the caller releases them). Returns the wait (0: none) and the release.
   */
  private async hold(counters: Counter[], judge: Judge): Promise<{ waitMs: number; release: () => Promise<void> }> {
    const place: InFlight = { id: randomUUID(), at: new Date(this.now()) };
    const keys = counters.map((c) => c.key);
    const release = async (): Promise<void> => {
      for (const key of keys) await retried(() => this.counts.updateOne({ _id: key }, { $pull: { inFlight: { id: place.id } } }));
    };
    let waitMs = 0;
    try {
      for (const { key, limit } of counters) {
        const doc = await this.modify(key, {
          $push: { inFlight: { $each: [place], $slice: -MAX_IN_FLIGHT_KEPT } },
          $set: { expires: this.expiry() },
        });
        const places = this.live(doc.inFlight);
        const mine = places.findIndex((p) => p.id === place.id);
        const before = mine === -1 ? places.length : mine;
        waitMs = Math.max(waitMs, judge(doc, before, limit, this.now()));
        if (waitMs > 0) break;
      }
    } catch (err) {
      // Not awaited: when the database is unreachable the release would wait out the driver's
      // server selection again (5 s) before the caller got its 503. A place it fails to release
      // stops counting once it is no longer live.
      void release().catch(() => undefined);
      throw err;
    }
    return { waitMs, release };
  }

  /** The handle of an attempt whose places `release` gives back; each outcome is acted on once. */
  private attempt(
    knownDevice: boolean,
    retryAfterMs: number,
    release: () => Promise<void>,
    outcomes: { failed: () => Promise<number>; succeeded: () => Promise<void> },
  ): LoginAttempt {
    let open = true;
    const end = (): boolean => {
      if (!open) return false;
      open = false;
      return true;
    };
    return {
      knownDevice,
      retryAfterMs,
      failed: async () => {
        if (!end()) return 0;
        // The failure first: between the two, a new attempt would find neither and slip through.
        const waitMs = await outcomes.failed();
        await release();
        return waitMs;
      },
      succeeded: async () => {
        if (!end()) return;
        await release();
        await outcomes.succeeded();
      },
      abandoned: async () => {
        if (end()) await release();
      },
    };
  }

  /**
   * Counts a failure against every counter of the scope (a wrong current password on /user/);
   * returns the wait they now ask of the next attempt.
   */
  async recordFailure(username: string, ip: string, scope: AttemptScope = 'login'): Promise<number> {
    return this.recordFailureOn(this.counters(username, ip, scope));
  }

  /** Counts a failure on each counter; returns the longest wait they ask after it. */
  private async recordFailureOn(counters: Counter[]): Promise<number> {
    const at = new Date(this.now());
    let waitMs = 0;
    for (const { key, limit } of counters) {
      // Only the newest failures of a counter decide anything (login-delays.ts).
      const doc = await this.modify(key, {
        $push: { failures: { $each: [at], $slice: -(limit.maxFailures + KEPT_BEYOND_FREE) } },
        $set: { expires: this.expiry() },
      });
      waitMs = Math.max(waitMs, lockedForMs(doc, 0, limit, this.now()));
    }
    return waitMs;
  }

  /** A successful login clears the counters it was judged by, except an address's (see `begin`). */
  private async clearFailures(counters: Counter[]): Promise<void> {
    for (const { key } of counters) {
      await retried(() => this.counts.updateOne({ _id: key }, { $set: { failures: [] } }));
    }
  }
}
