/**
 * The submission log (`task_log` in the service database): who ran which task with which
 * arguments, queue and tags, and when. The repository for the task history endpoints.
 */
import type { Collection, Db, Document, Filter } from 'mongodb';
import type { JsonObject, JsonValue } from '../protocol/json.js';
import { WriteBatcher } from '../../db/write-batcher.js';
import { bulkInsertOutcomes } from '../../db/bulk-outcomes.js';

export interface TaskLogEntry {
  _id: string;
  task_id: string;
  user: string;
  task_name: string;
  args: JsonValue[];
  kwargs: JsonObject;
  queue: string;
  tags: string[];
  timestamp: Date;
}

export interface HistoryFilter {
  user: string;
  taskNames?: string[];
  tag?: string;
}

export class TaskLog {
  readonly collection: Collection<TaskLogEntry>;
  private indexed: Promise<unknown> | null = null;
  /** Concurrent submissions share one insert: the log write is on every submission's path. */
  private readonly inserts: WriteBatcher<TaskLogEntry>;

  constructor(db: Db) {
    this.collection = db.collection<TaskLogEntry>('task_log');
    this.inserts = new WriteBatcher(async (entries) => {
      try {
        await this.collection.insertMany([...entries], { ordered: false });
        return bulkInsertOutcomes(entries.length, undefined);
      } catch (error) {
        return bulkInsertOutcomes(entries.length, error);
      }
    });
  }

  async record(entry: Omit<TaskLogEntry, '_id'>): Promise<void> {
    this.indexed ??= this.collection.createIndex({ user: 1, timestamp: -1 }).catch(() => {
      this.indexed = null;
    });
    await this.inserts.write({ _id: entry.task_id, ...entry });
  }

  get(taskId: string): Promise<TaskLogEntry | null> {
    return this.collection.findOne({ _id: taskId });
  }

  private filter(f: HistoryFilter): Filter<TaskLogEntry> {
    const filter: Filter<TaskLogEntry> = { user: f.user };
    if (f.taskNames !== undefined && f.taskNames.length > 0) filter.task_name = { $in: f.taskNames };
    if (f.tag !== undefined) filter.tags = f.tag;
    return filter;
  }

  count(f: HistoryFilter): Promise<number> {
    return this.collection.countDocuments(this.filter(f));
  }

  /** Newest first. */
  page(f: HistoryFilter, skip: number, limit: number): Promise<TaskLogEntry[]> {
    const cursor = this.collection.find(this.filter(f)).sort({ timestamp: -1, _id: -1 });
    if (skip > 0) cursor.skip(skip);
    if (limit > 0) cursor.limit(limit);
    return cursor.toArray();
  }

  /** Ids only, newest first: for filtering by state, which lives in the result collection. */
  async ids(f: HistoryFilter): Promise<string[]> {
    const rows = await this.collection
      .find(this.filter(f), { projection: { _id: 1 } as Document })
      .sort({ timestamp: -1, _id: -1 })
      .toArray();
    return rows.map((r) => r._id);
  }

  byIds(ids: string[]): Promise<TaskLogEntry[]> {
    return this.collection.find({ _id: { $in: ids } }).toArray();
  }
}
