/**
 * Leases that let every API process cache what the database holds (that a collection exists, an
 * account and its grants) and still never act on a copy older than a change made through any of
 * them.
 *
 * A process that loads something it means to cache first records a lease on its key in a shared
 * collection: "copies of this key loaded from now on may be used until <until>". A change that
 * must be seen at once reads the leases of the keys it touches and waits until the last of them
 * has run out before it counts as done, so by the time its caller is answered no process holds a
 * copy loaded before it.
 *
 * Some changes cannot be made first and waited out afterwards: dropping a collection while other
 * processes still take it to exist would let their inserts create it again. Those mark the key
 * (or its whole scope, a database) before waiting; a process that finds a mark when it takes a
 * lease does not cache what it loads, so it asks the database on each request until the change
 * is done and the mark is gone.
 *
 * Clocks: `until` is a wall-clock time, compared by the waiting process with its own clock; a
 * margin covers the skew of hosts kept in time by NTP and the time a request needs between
 * finding its copy in the cache and its database operation.
 */
import type { Collection, Filter } from 'mongodb';
import { setTimeout as sleep } from 'node:timers/promises';

/** Where the leases are kept, in the service database. */
export const CACHE_LEASES_COLLECTION = 'cache_leases';

/** Added to every wait: clock skew between hosts and the time from a cache hit to the operation it guards. */
export const LEASE_MARGIN_MS = 250;
/** Lease documents are deleted this long after their last lease ended (engines with TTL indexes). */
const KEEP_MS = 60 * 60 * 1000;

export interface LeaseDocument {
  _id: string;
  /** The key's scope (a database, for a collection): a change of a whole scope waits out its keys. */
  scope: string;
  /** Until when copies loaded under the last lease may be used. */
  until: Date;
  /** Changes under way that mark this key or scope (see whileMarked): while above 0, nothing loaded may be cached. */
  marks?: number;
  /**
   * Until when the marks hold at most: a process that ended while its change was under way never
   * unmarks, and its mark must not keep the key from being cached (and its loads waiting) for ever.
   */
  markedUntil?: Date;
  /** For the TTL index: a document no lease needs any more. */
  expires: Date;
}

/** The id of a scope's own mark document: keys never start with NUL. */
const scopeId = (scope: string): string => `\u0000${scope}`;

export class CacheLeases {
  private expiryIndex: Promise<void> | undefined;

  constructor(
    private readonly leases: Collection<LeaseDocument>,
    /** How long a copy may be used after its lease was taken. */
    readonly ttlMs: number,
    /** How long a change run under a mark may take at most (see whileMarked): its mark lapses after that. */
    private readonly changeMs = 30_000,
  ) {}

  /**
   * Takes a lease on `key` before it is loaded. Answers until when (a Date.now() time) the copy
   * about to be loaded may be used, or no time when it must not be cached: when a change marks
   * the key or its scope (`marked`), or when the lease could not be recorded (a database that
   * refuses writes, its disk full, still answers reads: they are then simply not cached).
   * `checkMarks` false skips looking for marks (one operation instead of two), for keys whose
   * changes are waited out after they are made (see waitOut).
   */
  async take(key: string, scope: string, checkMarks = true): Promise<{ until?: number; marked: boolean }> {
    const until = Date.now() + this.ttlMs;
    this.ensureExpiryIndex();
    try {
      await this.leases.updateOne(
        { _id: key },
        { $max: { until: new Date(until), expires: new Date(until + KEEP_MS) }, $set: { scope } },
        { upsert: true },
      );
    } catch {
      return { marked: false };
    }
    if (!checkMarks) return { until, marked: false };
    const mark = await this.leases.findOne(
      { _id: { $in: [key, scopeId(scope)] }, marks: { $gt: 0 }, markedUntil: { $gt: new Date() } },
      { projection: { _id: 1 } },
    );
    return mark === null ? { until, marked: false } : { marked: true };
  }

  /**
   * Waits until no copy of the keys `filter` selects, loaded before now, may still be used. For
   * changes already made (an account's grants): a copy loaded from now on sees them.
   */
  async waitOut(filter: Filter<LeaseDocument>): Promise<void> {
    const last = await this.leases.find(filter, { projection: { until: 1 }, sort: { until: -1 }, limit: 1 }).next();
    const wait = last === null ? 0 : last.until.getTime() - Date.now();
    if (wait > 0) await sleep(wait + LEASE_MARGIN_MS);
  }

  /** Waits out every lease of `key`. */
  waitOutKey(key: string): Promise<void> {
    return this.waitOut({ _id: key });
  }

  /** Waits out every lease of a key in `scope`. */
  waitOutScope(scope: string): Promise<void> {
    return this.waitOut({ scope });
  }

  /**
   * Runs `change` once no process may use a copy of `key` (or, without a key, of any key of
   * `scope`): marks it first, so that no process caches it again meanwhile (see take), then waits
   * out the leases taken before, runs the change, and unmarks it (also when the change failed).
   * A mark lapses by itself once the change has had all its time (a process that ended meanwhile).
   */
  async whileMarked<T>(scope: string, key: string | undefined, change: () => Promise<T>): Promise<T> {
    const id = key ?? scopeId(scope);
    const now = Date.now();
    // The mark outlasts the wait (at most the TTL and the margin) and the change.
    const markedUntil = new Date(now + this.ttlMs + LEASE_MARGIN_MS + this.changeMs);
    await this.leases.updateOne(
      { _id: id },
      {
        $inc: { marks: 1 },
        $max: { until: new Date(now), markedUntil, expires: new Date(markedUntil.getTime() + KEEP_MS) },
        $set: { scope },
      },
      { upsert: true },
    );
    try {
      await (key === undefined ? this.waitOutScope(scope) : this.waitOutKey(key));
      return await change();
    } finally {
      await this.leases.updateOne({ _id: id }, { $inc: { marks: -1 } });
    }
  }

  /** Built once, in the background: without it only disk is lost (and engines without TTL indexes keep the documents). */
  private ensureExpiryIndex(): void {
    this.expiryIndex ??= this.leases
      .createIndex({ expires: 1 }, { expireAfterSeconds: 0 })
      .then(() => undefined)
      .catch(() => {
        this.expiryIndex = undefined;
      });
  }
}
