/**
 * Result-collection writes of tasks that start or finish together, sent as one unordered
 * `bulkWrite`: the start counts of the tasks about to run and the final documents of the tasks
 * just done share one round trip to the database instead of one each. On a busy worker the
 * database round trip, not the task, is what a no-op task costs.
 *
 * Every write still answers for itself: its promise settles only once the database acknowledged
 * it (so a message is never acknowledged before its result is durable), and a write the group
 * cannot answer for exactly is re-run on its own, through the single-document path that knows its
 * errors (a duplicate key from a racing worker, a document the database refuses). An outage fails
 * the whole group with the same error, which each writer's retry loop handles as before.
 *
 * One group is in flight at a time: the writes arriving meanwhile form the next group, so the
 * groups grow with the load and a lone write goes out after one turn of the event loop.
 */
import { MongoBulkWriteError, type AnyBulkWriteOperation, type BulkWriteResult, type Document } from 'mongodb';
import { isTransientWriteError } from '../queue/results/write-errors.js';

/** Most writes in one group (a group of thousands would only delay the first of them). */
export const WRITE_GROUP_LIMIT = 256;

/** What the group needs of a collection: MongoDB's own `bulkWrite` and `find`. */
export interface GroupedCollection {
  bulkWrite(operations: AnyBulkWriteOperation<Document>[], options: { ordered: false }): Promise<BulkWriteResult>;
  find(filter: Document, options: { projection: Document }): { toArray(): Promise<Document[]> };
}

/** How a write that went out in a group learns its answer. */
interface GroupedWrite {
  /** The document written; two writes of one document never share a group (unordered). */
  id: string;
  operation: AnyBulkWriteOperation<Document>;
  /** Reads back what it needs (see `count`) when the group's write matched an existing document. */
  needsDocument: boolean;
  /** The group wrote it: `inserted` for an upsert that created the document. */
  written(inserted: boolean, document: Document | undefined): void;
  /** Runs the write alone, with the single-document path's own error handling. */
  alone(): void;
  failed(error: unknown): void;
}

export class GroupedWrites {
  private pending: GroupedWrite[] = [];
  private inFlight = false;
  private scheduled = false;

  /** `readBackProjection`: the fields `update` callers read back (the rest stays in the database). */
  constructor(
    private readonly collection: GroupedCollection,
    private readonly readBackProjection: Document = {},
  ) {}

  /**
   * Writes `document` in place of the one with its `_id` (upsert), like a `replaceOne`. `alone`
   * is that `replaceOne` by itself, used when the group cannot answer for this write.
   */
  replace(document: Document & { _id: string }, alone: () => Promise<void>): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.add({
        id: document._id,
        operation: { replaceOne: { filter: { _id: document._id } as Document, replacement: document, upsert: true } },
        needsDocument: false,
        written: () => resolve(),
        alone: () => void alone().then(resolve, reject),
        failed: reject,
      });
    });
  }

  /**
   * An upserting update whose caller needs the document afterwards (a counter it incremented):
   * a new document is answered with `undefined` (the caller knows what it inserted), an existing
   * one is read back after the group. `alone` is the single-document path (findOneAndUpdate).
   */
  update<T>(
    id: string,
    filter: Document,
    update: Document,
    answer: (inserted: boolean, document: Document | undefined) => T,
    alone: () => Promise<T>,
  ): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.add({
        id,
        operation: { updateOne: { filter, update, upsert: true } },
        needsDocument: true,
        written: (inserted, document) => resolve(answer(inserted, document)),
        alone: () => void alone().then(resolve, reject),
        failed: reject,
      });
    });
  }

  private add(write: GroupedWrite): void {
    this.pending.push(write);
    if (!this.inFlight && !this.scheduled) {
      this.scheduled = true;
      // One turn of the event loop lets the tasks finishing together join the group.
      setImmediate(() => {
        this.scheduled = false;
        void this.send();
      });
    }
  }

  private async send(): Promise<void> {
    if (this.inFlight || this.pending.length === 0) return;
    this.inFlight = true;
    try {
      const group = this.takeGroup();
      if (group.length === 1) group[0]!.alone();
      else await this.write(group);
    } finally {
      this.inFlight = false;
      if (this.pending.length > 0) void this.send();
    }
  }

  /** The next writes to send, at most one per document, in arrival order. */
  private takeGroup(): GroupedWrite[] {
    const ids = new Set<string>();
    const group: GroupedWrite[] = [];
    const rest: GroupedWrite[] = [];
    for (const write of this.pending) {
      if (group.length < WRITE_GROUP_LIMIT && !ids.has(write.id)) {
        ids.add(write.id);
        group.push(write);
      } else rest.push(write);
    }
    this.pending = rest;
    return group;
  }

  private async write(group: GroupedWrite[]): Promise<void> {
    let result: BulkWriteResult;
    const refused = new Set<number>();
    try {
      result = await this.collection.bulkWrite(
        group.map((w) => w.operation),
        { ordered: false },
      );
    } catch (error) {
      const writeErrors = error instanceof MongoBulkWriteError ? [error.writeErrors].flat() : [];
      if (error instanceof MongoBulkWriteError && writeErrors.length > 0) {
        // Some writes were refused (a duplicate key from a document with a final state, say);
        // the others are done. Each refused one runs again alone, which knows its errors.
        for (const writeError of writeErrors) refused.add(writeError.index);
        result = error.result;
      } else if (isTransientWriteError(error)) {
        for (const write of group) write.failed(error);
        return;
      } else {
        // Refused as a whole (a document too large to send, say): each on its own says which.
        for (const write of group) write.alone();
        return;
      }
    }
    const inserted = new Set<number>(Object.keys(result.upsertedIds).map(Number));
    const readBack = group.filter((w, index) => w.needsDocument && !refused.has(index) && !inserted.has(index));
    let documents: Map<string, Document> | Error = new Map();
    if (readBack.length > 0) {
      try {
        const rows = await this.collection
          .find({ _id: { $in: readBack.map((w) => w.id) } }, { projection: this.readBackProjection })
          .toArray();
        documents = new Map(rows.map((row) => [String(row._id), row]));
      } catch (error) {
        // The updates are done; only reading them back failed. Running them again would apply
        // them twice, so they fail (the caller of a start count runs the task uncounted).
        documents = error instanceof Error ? error : new Error(String(error));
      }
    }
    for (const [index, write] of group.entries()) {
      if (refused.has(index)) write.alone();
      else if (documents instanceof Error && write.needsDocument && !inserted.has(index)) write.failed(documents);
      else write.written(inserted.has(index), documents instanceof Error ? undefined : documents.get(write.id));
    }
  }
}
