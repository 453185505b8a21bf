/**
 * Slows password guessing, without letting anyone lock a user out of a device they have logged in
 * from before (OWASP's device cookies; login-devices.ts issues and reads the cookies).
 *
 * A login that presents a valid device cookie for the account it names is judged by that cookie's
 * own failures only: while it has fewer than `maxFailures` within `windowSeconds`, no other
 * counter applies, so a flood of failures from elsewhere — one address spraying names, or guesses
 * at the account spread over many addresses — never turns that device away. A cookie that has
 * failed that often is no longer trusted, and its logins are judged as an unknown device's.
 *
 * Logins from unknown devices are judged by three counters, each with its free failures and then
 * growing delays (login-delays.ts):
 * - one account from one client address (`maxFailures`): what a guesser meets first;
 * - one account from all addresses together (`accountMaxFailures`): guessing spread over many
 *   addresses;
 * - one address over all accounts (`addressMaxFailures`, far higher): one address trying many
 *   names. A few accounts' worth of failures never reaches it, so failures on one account (or on
 *   a name that does not exist) never slow another one.
 * An attempt a counter delays, even a correct one, is answered 429 with Retry-After. A wrong
 * current password on /user/ counts against the account's own two counters only.
 *
 * Attempts count from the moment they start (`begin`), not when their slow password check ends:
 * otherwise many simultaneous guesses would all pass the check before the first failure is
 * recorded. An attempt in flight holds one place under each counter until it ends.
 *
 * The counts live in the service database (one document per counter), so the limits hold across
 * every API process and replica. Taking a place is one atomic update that returns the document
 * as it is afterwards: each of many simultaneous attempts, in whichever process, sees the places
 * taken before its own, and the ones beyond a limit give theirs back and answer 429. A place
 * whose process died before giving it back lapses after IN_FLIGHT_LAPSE_MS. Documents expire
 * (TTL index) once nothing in them can matter any more.
 */
import { randomUUID } from 'node:crypto';
import { MongoServerError, type Collection, type Db, type UpdateFilter } from 'mongodb';
import { tooManyRequests } from '../errors.js';
import { ensureExpiryIndex } from '../db/expiry-index.js';
import { retryOnDeadlock } from '../db/deadlock-retry.js';
import { deviceTrusted, KEPT_BEYOND_FREE, lockedForMs, type FailureCounts, type FailureLimit } from './login-delays.js';

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
  failed(): Promise<void>;
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

export class LoginThrottle {
  private readonly counts: Collection<AttemptCounts>;

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

  private throwLocked(retryAfterMs: number): never {
    throw tooManyRequests('Too many failed login attempts. Try again later.', retryAfterMs / 1000);
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

  /** Throws 429 `throttled` (with Retry-After) while any counter of this scope delays an unknown device. */
  async check(username: string, ip: string, scope: AttemptScope = 'login'): Promise<void> {
    const counters = this.counters(username, ip, scope);
    const docs = await this.counts.find({ _id: { $in: counters.map((c) => c.key) } }).toArray();
    const now = this.now();
    const retryAfterMs = Math.max(
      0,
      ...counters.map((c) => {
        const doc = docs.find((d) => d._id === c.key);
        return doc === undefined ? 0 : lockedForMs(doc, this.live(doc.inFlight).length, c.limit, now);
      }),
    );
    if (retryAfterMs > 0) this.throwLocked(retryAfterMs);
  }

  /**
   * Takes a place for this login attempt and holds it until the handle says how it ended. `device`
   * is the id of a valid device cookie issued to this very account (login-devices.ts), if the
   * client presented one. Throws 429 when an unknown device must wait.
   */
  async begin(username: string, ip: string, device?: string): Promise<LoginAttempt> {
    if (device !== undefined) {
      const counter = this.deviceCounter(device);
      const onDevice = await this.hold([counter], refuseUntrusted);
      if (onDevice.waitMs === 0) {
        return this.attempt(true, onDevice.release, {
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
      this.throwLocked(held.waitMs);
    }
    return this.attempt(false, held.release, {
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
    release: () => Promise<void>,
    outcomes: { failed: () => Promise<void>; succeeded: () => Promise<void> },
  ): LoginAttempt {
    let open = true;
    const end = (): boolean => {
      if (!open) return false;
      open = false;
      return true;
    };
    return {
      knownDevice,
      failed: async () => {
        if (!end()) return;
        // The failure first: between the two, a new attempt would find neither and slip through.
        await outcomes.failed();
        await release();
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

  /** Counts a failure against every counter of the scope (a wrong current password on /user/). */
  async recordFailure(username: string, ip: string, scope: AttemptScope = 'login'): Promise<void> {
    await this.recordFailureOn(this.counters(username, ip, scope));
  }

  private async recordFailureOn(counters: Counter[]): Promise<void> {
    const at = new Date(this.now());
    for (const { key, limit } of counters) {
      // Only the newest failures of a counter decide anything (login-delays.ts).
      await this.modify(key, {
        $push: { failures: { $each: [at], $slice: -(limit.maxFailures + KEPT_BEYOND_FREE) } },
        $set: { expires: this.expiry() },
      });
    }
  }

  /** A successful login clears the counters it was judged by, except an address's (see `begin`). */
  private async clearFailures(counters: Counter[]): Promise<void> {
    for (const { key } of counters) {
      await retried(() => this.counts.updateOne({ _id: key }, { $set: { failures: [] } }));
    }
  }
}
