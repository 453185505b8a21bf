/**
 * The submission log (`task_log` in the service database): who ran which task with which
 * arguments, queue and tags, and when. The repository for the task history endpoints.
 *
 * Each entry also keeps the task's state as last read from the results (`state`), so that the
 * history can be filtered, counted and paged by state with one indexed query. The results are
 * written by the workers — stock Python Celery workers among them, which know nothing of this
 * log — so the copy is brought up to date from the results before it is queried (see
 * QueueService.history). A ready state (SUCCESS, FAILURE, REVOKED) is final and never read again.
 */
import type { AnyBulkWriteOperation, Collection, Db, Filter } from 'mongodb';
import type { JsonObject, JsonValue } from '../protocol/json.js';
import { WriteBatcher } from '../../db/write-batcher.js';
import { bulkInsertOutcomes } from '../../db/bulk-outcomes.js';
import { READY_STATES, TASK_STATES, isTaskState } from '../results/states.js';

const FINAL_STATES = [...READY_STATES];
/**
 * The states an entry may leave. Listed rather than "not final" because the engine answers `$in`
 * from the index and `$nin` only by reading every entry of the user.
 */
const OPEN_STATES: string[] = TASK_STATES.filter((state) => !READY_STATES.has(state));

/**
 * The state to keep for what a result document says. A custom state (a task's own
 * `update_state(state='PROGRESS')`) is only ever set while the task runs, so it counts as STARTED.
 */
export const loggedState = (status: string): string => (isTaskState(status) ? status : 'STARTED');

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
  /** The state last read from the results; PENDING at submission, absent in older entries. */
  state?: string;
  /** The broker never confirmed the message: the task may or may not run. */
  publish_unconfirmed?: boolean;
}

export interface HistoryFilter {
  user: string;
  taskNames?: string[];
  tag?: string;
}

export class TaskLog {
  readonly collection: Collection<TaskLogEntry>;
  private indexed: Promise<unknown> | null = null;
  /** Whether entries written before states were kept have been given one (PENDING, to be read). */
  private statesBackfilled = false;
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

  async record(entry: Omit<TaskLogEntry, '_id' | 'state'>): Promise<void> {
    void this.ensureIndexes();
    await this.inserts.write({ _id: entry.task_id, ...entry, state: 'PENDING' });
  }

  /**
   * The history's own index and the one that filters it by state (both newest first), and a
   * state for entries written before states were kept. Once per process; retried after a failure.
   */
  ensureIndexes(): Promise<unknown> {
    this.indexed ??= Promise.all([
      this.collection.createIndex({ user: 1, timestamp: -1 }),
      this.collection.createIndex({ user: 1, state: 1, timestamp: -1 }),
      this.collection.updateMany({ state: { $exists: false } }, { $set: { state: 'PENDING' } }).then(() => {
        this.statesBackfilled = true;
      }),
    ]).catch(() => {
      this.indexed = null;
    });
    return this.indexed;
  }

  get(taskId: string): Promise<TaskLogEntry | null> {
    return this.collection.findOne({ _id: taskId });
  }

  /** With `state`, only entries whose recorded state is that one. */
  private filter(f: HistoryFilter, state?: string): Filter<TaskLogEntry> {
    const filter: Filter<TaskLogEntry> = { user: f.user };
    if (state !== undefined) filter.state = state;
    if (f.taskNames !== undefined && f.taskNames.length > 0) filter.task_name = { $in: f.taskNames };
    if (f.tag !== undefined) filter.tags = f.tag;
    return filter;
  }

  count(f: HistoryFilter, state?: string): Promise<number> {
    return this.collection.countDocuments(this.filter(f, state));
  }

  /** Newest first. */
  page(f: HistoryFilter, skip: number, limit: number, state?: string): Promise<TaskLogEntry[]> {
    const cursor = this.collection.find(this.filter(f, state)).sort({ timestamp: -1, _id: -1 });
    if (skip > 0) cursor.skip(skip);
    if (limit > 0) cursor.limit(limit);
    return cursor.toArray();
  }

  /** The user's entries whose state may still change (not ready, or never read), with it. */
  async unsettled(user: string): Promise<{ id: string; state: string | null }[]> {
    // Until older entries have a state, `null` in `$in` finds them too (at some cost).
    const open = { user, state: { $in: this.statesBackfilled ? OPEN_STATES : [...OPEN_STATES, null] } } as Filter<TaskLogEntry>;
    const rows = await this.collection.find(open, { projection: { state: 1 } }).toArray();
    return rows.map((row) => ({ id: row._id, state: row.state ?? null }));
  }

  /** Records newly read states; an entry already in a final state is never changed. */
  async recordStates(states: { id: string; state: string }[]): Promise<void> {
    if (states.length === 0) return;
    const updates: AnyBulkWriteOperation<TaskLogEntry>[] = states.map(({ id, state }) => ({
      updateOne: { filter: { _id: id, state: { $nin: FINAL_STATES } }, update: { $set: { state } } },
    }));
    await this.collection.bulkWrite(updates, { ordered: false });
  }

  /** Removes the entry of a submission that was refused before its message reached the broker. */
  async forget(taskId: string): Promise<void> {
    await this.collection.deleteOne({ _id: taskId });
  }

  /** Marks the entry of a submission the broker may or may not have queued (it never confirmed). */
  async markUnconfirmed(taskId: string): Promise<void> {
    await this.collection.updateOne({ _id: taskId }, { $set: { publish_unconfirmed: true } });
  }
}
