/**
 * Slows password guessing: after `maxFailures` failed logins for one username, or from one
 * client address, within `windowSeconds`, further attempts (even correct ones) get 429 until the
 * oldest failure leaves the window. Applies to /auth/login/ and /token/.
 *
 * Attempts count from the moment they start (`begin`), not when their slow password check ends:
 * otherwise many simultaneous guesses would all pass the check before the first failure is
 * recorded. An attempt in flight holds one place under the limit until it ends.
 *
 * The counts live in the service database (one document per username and per address), so the
 * limit holds across every API process and replica. Taking a place is one atomic update that
 * returns the document as it is afterwards: each of many simultaneous attempts, in whichever
 * process, sees the places taken before its own, and the ones beyond the limit give theirs back
 * and answer 429. A place whose process died before giving it back lapses after
 * IN_FLIGHT_LAPSE_MS. Documents expire (TTL index) once nothing in them can matter any more.
 */
import { randomUUID } from 'node:crypto';
import { MongoServerError, type Collection, type Db, type UpdateFilter } from 'mongodb';
import { tooManyRequests } from '../errors.js';
import { ensureExpiryIndex } from '../db/expiry-index.js';
import { retryOnDeadlock } from '../db/deadlock-retry.js';

export interface ThrottleSettings {
  maxFailures: number;
  windowSeconds: number;
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
  /** The newest failures (at most maxFailures), oldest first. */
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
  settings: ThrottleSettings,
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
 * Every write touches one document (one key), in the same order (username, then address), so
 * writes never wait on each other in a cycle. PostgreSQL under FerretDB may still report a
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

  private keys(username: string, ip: string): string[] {
    return [this.userKey(username), `ip:${ip}`];
  }

  private userKey(username: string): string {
    return `u:${username.toLowerCase().slice(0, MAX_KEY_LENGTH)}`;
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

  /** Throws 429 `throttled` (with Retry-After) when either the username or the address is locked. */
  async check(username: string, ip: string): Promise<void> {
    const docs = await this.counts.find({ _id: { $in: this.keys(username, ip) } }).toArray();
    const now = this.now();
    const retryAfterMs = Math.max(0, ...docs.map((d) => lockedForMs(d, this.live(d.inFlight).length, this.settings, now)));
    if (retryAfterMs > 0) this.throwLocked(retryAfterMs);
  }

  /** Takes a place for this attempt (or throws 429) and holds it until the handle says how it ended. */
  async begin(username: string, ip: string): Promise<LoginAttempt> {
    const keys = this.keys(username, ip);
    const place: InFlight = { id: randomUUID(), at: new Date(this.now()) };
    const release = async (): Promise<void> => {
      for (const key of keys) await retried(() => this.counts.updateOne({ _id: key }, { $pull: { inFlight: { id: place.id } } }));
    };
    let retryAfterMs = 0;
    try {
      for (const key of keys) {
        const doc = await this.modify(key, {
          $push: { inFlight: { $each: [place], $slice: -MAX_IN_FLIGHT_KEPT } },
          $set: { expires: this.expiry() },
        });
        const places = this.live(doc.inFlight);
        const mine = places.findIndex((p) => p.id === place.id);
        const before = mine === -1 ? places.length : mine;
        retryAfterMs = Math.max(retryAfterMs, lockedForMs(doc, before, this.settings, this.now()));
        if (retryAfterMs > 0) break;
      }
    } catch (err) {
      await release().catch(() => undefined);
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
        await this.recordSuccess(username);
      },
      abandoned: async () => {
        if (end()) await release();
      },
    };
  }

  async recordFailure(username: string, ip: string): Promise<void> {
    const at = new Date(this.now());
    // Only the newest maxFailures failures decide anything.
    for (const key of this.keys(username, ip)) {
      await this.modify(key, {
        $push: { failures: { $each: [at], $slice: -this.settings.maxFailures } },
        $set: { expires: this.expiry() },
      });
    }
  }

  /**
   * A successful login clears the username's counter, not the address's: otherwise one valid
   * account would let an attacker reset the per-address limit at will.
   */
  async recordSuccess(username: string): Promise<void> {
    await retried(() => this.counts.updateOne({ _id: this.userKey(username) }, { $set: { failures: [] } }));
  }
}
