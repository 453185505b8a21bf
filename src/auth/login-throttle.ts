/**
 * Slows password guessing with three counters of failed logins within `windowSeconds`:
 * - one account from one client address (`maxFailures`): the lock a guesser meets first;
 * - one account from all addresses together (`accountMaxFailures`): guessing spread over many
 *   addresses;
 * - one address over all accounts (`addressMaxFailures`, far higher): one address trying many
 *   names. A few accounts' worth of failures never reaches it, so failures on one account (or on
 *   a name that does not exist) never lock another one; on a local install, where every client
 *   is 127.0.0.1, that is what keeps a typo-prone user from locking everyone out.
 * A locked counter turns away further attempts it covers (even correct ones) with 429 until its
 * oldest relevant failure leaves the window. Applies to /auth/login/ and /token/; a wrong current
 * password on /user/ counts against the account's own two counters only.
 *
 * Attempts count from the moment they start (`begin`), not when their slow password check ends:
 * otherwise many simultaneous guesses would all pass the check before the first failure is
 * recorded. An attempt in flight holds one place under each limit until it ends.
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

/** One counter's limit: at most `maxFailures` failures within `windowSeconds`. */
export interface FailureLimit {
  maxFailures: number;
  windowSeconds: number;
}

export interface ThrottleSettings {
  /** Failures for one account from one client address. */
  maxFailures: number;
  /** Failures for one account from all addresses together. */
  accountMaxFailures: number;
  /** Failures from one address over all accounts. */
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

/** Usernames are stored capped: a megabyte-long "username" must not cost a megabyte. */
const MAX_KEY_LENGTH = 200;
/** A password check ends within a second; a place held longer belongs to a process that died. */
const IN_FLIGHT_LAPSE_MS = 60_000;
/** Places kept per key: beyond this many simultaneous attempts the oldest places are dropped. */
const MAX_IN_FLIGHT_KEPT = 1000;

interface InFlight {
  id: string;
  at: Date;
}

export interface AttemptCounts {
  _id: string;
  /** The newest failures (at most the counter's maxFailures), oldest first. */
  failures?: Date[];
  inFlight?: InFlight[];
  expires: Date;
}

/** One login attempt between `begin` and its outcome; each method may be called once. */
export interface LoginAttempt {
  failed(): Promise<void>;
  succeeded(): Promise<void>;
  /** Ended without an outcome (an error before the password was judged). */
  abandoned(): Promise<void>;
}

/**
 * Milliseconds until a key with these counts unlocks (0: not locked). `pendingBefore` is the
 * number of live places taken before the caller's own (all of them, for a plain check).
 */
export function lockedForMs(
  counts: Pick<AttemptCounts, 'failures'> | null,
  pendingBefore: number,
  settings: FailureLimit,
  now: number,
): number {
  const windowMs = settings.windowSeconds * 1000;
  const recent = (counts?.failures ?? []).map((d) => d.getTime()).filter((t) => t > now - windowMs);
  if (recent.length >= settings.maxFailures) {
    const oldestRelevant = recent[recent.length - settings.maxFailures] as number;
    return Math.max(1, oldestRelevant + windowMs - now);
  }
  // Locked only while attempts are in flight: they end within seconds.
  if (recent.length + pendingBefore >= settings.maxFailures) return 1000;
  return 0;
}

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
   * The counters an attempt for `username` from `ip` is judged by. Names are compared without
   * case, as logins are; a name that does not exist gets counters like any other, so an answer
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

  /** A key is kept while a failure in it can still lock, or a place in it is held. */
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

  /** Throws 429 `throttled` (with Retry-After) when any counter of this scope is locked. */
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

  /** Takes a place for this login attempt (or throws 429) and holds it until the handle says how it ended. */
  async begin(username: string, ip: string): Promise<LoginAttempt> {
    const counters = this.counters(username, ip, 'login');
    const keys = counters.map((c) => c.key);
    const place: InFlight = { id: randomUUID(), at: new Date(this.now()) };
    const release = async (): Promise<void> => {
      for (const key of keys) await retried(() => this.counts.updateOne({ _id: key }, { $pull: { inFlight: { id: place.id } } }));
    };
    let retryAfterMs = 0;
    try {
      for (const { key, limit } of counters) {
        const doc = await this.modify(key, {
          $push: { inFlight: { $each: [place], $slice: -MAX_IN_FLIGHT_KEPT } },
          $set: { expires: this.expiry() },
        });
        const places = this.live(doc.inFlight);
        const mine = places.findIndex((p) => p.id === place.id);
        const before = mine === -1 ? places.length : mine;
        retryAfterMs = Math.max(retryAfterMs, lockedForMs(doc, before, limit, this.now()));
        if (retryAfterMs > 0) break;
      }
    } catch (err) {
      // Not awaited: when the database is unreachable the release would wait out the driver's
      // server selection again (5 s) before the caller got its 503. A place it fails to release
      // stops counting once it is no longer live.
      void release().catch(() => undefined);
      throw err;
    }
    if (retryAfterMs > 0) {
      await release();
      this.throwLocked(retryAfterMs);
    }
    let open = true;
    const end = (): boolean => {
      if (!open) return false;
      open = false;
      return true;
    };
    return {
      failed: async () => {
        if (!end()) return;
        // The failure first: between the two, a new attempt would find neither and slip through.
        await this.recordFailure(username, ip);
        await release();
      },
      succeeded: async () => {
        if (!end()) return;
        await release();
        await this.recordSuccess(username, ip);
      },
      abandoned: async () => {
        if (end()) await release();
      },
    };
  }

  /** Counts a failure against every counter of the scope. */
  async recordFailure(username: string, ip: string, scope: AttemptScope = 'login'): Promise<void> {
    const at = new Date(this.now());
    for (const { key, limit } of this.counters(username, ip, scope)) {
      // Only the newest maxFailures failures of a counter decide anything.
      await this.modify(key, {
        $push: { failures: { $each: [at], $slice: -limit.maxFailures } },
        $set: { expires: this.expiry() },
      });
    }
  }

  /**
   * A successful login clears the account's counters, not the address's: otherwise one valid
   * account would let an attacker reset the per-address limit at will.
   */
  async recordSuccess(username: string, ip: string): Promise<void> {
    for (const { key } of this.counters(username, ip, 'own-account')) {
      await retried(() => this.counts.updateOne({ _id: key }, { $set: { failures: [] } }));
    }
  }
}
