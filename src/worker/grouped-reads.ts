/**
 * Reads of result states for the tasks that arrive together, sent as one `find` by `_id $in`
 * instead of one `findOne` each. A worker asks, for every task message it takes on, whether the
 * task already has a final state (revoked by the API before any worker heard of it, or finished
 * elsewhere); asked as the messages arrive, the answer is ready before a slot frees up.
 *
 * The ids asked for in one turn of the event loop go out together, without waiting for an
 * earlier read still in flight (a read changes nothing, so two may overlap; waiting would put a
 * second round trip before the tasks that arrived meanwhile). A failed read fails every id it
 * carried.
 */
import type { Document } from 'mongodb';

/** Most ids in one read. */
export const READ_GROUP_LIMIT = 256;

/** What the group needs of a collection: MongoDB's own `find`. */
export interface ReadCollection {
  find(filter: Document, options: { projection: Document }): { toArray(): Promise<Document[]> };
}

interface PendingRead {
  id: string;
  resolve(document: Document | null): void;
  reject(error: unknown): void;
}

export class GroupedReads {
  private pending: PendingRead[] = [];
  private scheduled = false;

  constructor(
    private readonly collection: ReadCollection,
    private readonly projection: Document,
  ) {}

  /** The document with this `_id` (its projected fields), or null when there is none. */
  get(id: string): Promise<Document | null> {
    return new Promise((resolve, reject) => {
      this.pending.push({ id, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => {
          this.scheduled = false;
          while (this.pending.length > 0) void this.send(this.pending.splice(0, READ_GROUP_LIMIT));
        });
      }
    });
  }

  private async send(group: PendingRead[]): Promise<void> {
    try {
      const ids = [...new Set(group.map((read) => read.id))];
      const rows = await this.collection
        .find(ids.length === 1 ? { _id: ids[0] } : { _id: { $in: ids } }, { projection: this.projection })
        .toArray();
      const byId = new Map(rows.map((row) => [String(row._id), row]));
      for (const read of group) read.resolve(byId.get(read.id) ?? null);
    } catch (error) {
      for (const read of group) read.reject(error);
    }
  }
}
