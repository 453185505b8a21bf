/**
 * Whether the database can store anything: a database whose disk is full still answers pings and
 * reads, so a reachability check alone calls it healthy while every write fails.
 *
 * Two sources of evidence: a write the database refused for lack of space (reported by the error
 * mapper), and a probe that stores one record in a collection of its own. A fresh collection is
 * used because a record can often still squeeze into free space of existing pages on a full
 * disk, while a new collection needs new space, as most real writes do. The probe runs at most
 * every PROBE_INTERVAL_MS while the storage looks fine, and on every check while it is full, so
 * health recovers as soon as space is freed.
 */
import { randomBytes } from 'node:crypto';
import { MongoBulkWriteError, MongoServerError, type Db } from 'mongodb';

/** MongoDB's OutOfDiskSpace. */
const OUT_OF_DISK_SPACE = 14031;
/**
 * PostgreSQL's words (under FerretDB/DocumentDB) and MongoDB's. "could not write init file" is
 * PostgreSQL refusing to start a new backend because it cannot write its relation-cache file:
 * on a full disk, any operation that needs a new engine connection fails with it.
 */
const STORAGE_FULL_TEXT = /no space left on device|disk full|out of disk space|could not write init file/i;
const PROBE_INTERVAL_MS = 30_000;
export const PROBE_COLLECTION_PREFIX = 'health_probe_';

/** Does this error say the database ran out of storage? */
export function isStorageFull(err: unknown): boolean {
  if (!(err instanceof MongoServerError)) return false;
  if (err.code === OUT_OF_DISK_SPACE || STORAGE_FULL_TEXT.test(err.errmsg ?? err.message)) return true;
  if (err instanceof MongoBulkWriteError) {
    const writeErrors = Array.isArray(err.writeErrors) ? err.writeErrors : [err.writeErrors];
    return writeErrors.some((w) => w !== undefined && (w.code === OUT_OF_DISK_SPACE || STORAGE_FULL_TEXT.test(w.errmsg ?? '')));
  }
  return false;
}

export type StorageCondition = 'ok' | 'full';

export class StorageState {
  private full = false;
  private lastProbe = 0;
  /** Probe collections whose drop failed (a full disk can refuse that too): dropped on a later probe. */
  private readonly leftovers = new Set<string>();

  constructor(private readonly serviceDb: Db) {}

  /** A write was refused for lack of space. */
  markFull(): void {
    this.full = true;
  }

  /** The storage's condition, probing when due. Errors other than "full" are left to the reachability check. */
  async condition(now = Date.now()): Promise<StorageCondition> {
    if (this.full || now - this.lastProbe >= PROBE_INTERVAL_MS) {
      this.lastProbe = now;
      this.full = await this.probeIsFull();
    }
    return this.full ? 'full' : 'ok';
  }

  private async probeIsFull(): Promise<boolean> {
    const name = `${PROBE_COLLECTION_PREFIX}${randomBytes(6).toString('hex')}`;
    try {
      await this.serviceDb.collection(name).insertOne({ at: new Date() });
      return false;
    } catch (err) {
      if (isStorageFull(err)) return true;
      return this.full;
    } finally {
      this.leftovers.add(name);
      await this.dropLeftovers();
    }
  }

  private async dropLeftovers(): Promise<void> {
    for (const name of [...this.leftovers]) {
      try {
        await this.serviceDb.collection(name).drop();
        this.leftovers.delete(name);
      } catch (err) {
        // NamespaceNotFound: the insert never created it.
        if (err instanceof MongoServerError && err.code === 26) this.leftovers.delete(name);
      }
    }
  }
}
