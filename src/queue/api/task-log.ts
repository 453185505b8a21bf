/**
 * The submission log (`task_log` in the service database): who ran which task with which
 * arguments, queue and tags, and when. The repository for the task history endpoints.
 *
 * Each entry also keeps the task's state as last read from the results (`state`), so that the
 * history can be filtered, counted and paged by state with one indexed query. The results are
 * written by the workers — stock Python Celery workers among them, which know nothing of this
 * log — so the copy is brought up to date from the results before it is queried (see
 * QueueService.history). A ready state (SUCCESS, FAILURE, REVOKED) is final and never read again.
 *
 * Entries belong to the submitting account by its id (`user_id`); `user` keeps the name it had
 * then, for reading. A name can pass to another account (renamed away, then taken), an id never
 * does. Entries of earlier versions, kept by name only, are given the id of the account that
 * bears the name when this version first opens the log; one whose name no account bears is
 * nobody's (its runs are seen by task administrators only).
 *
 * Pages are read newest first. FerretDB's engine cannot read an index in order, so it sorts every
 * match of a query to find the newest few: for a long history that sort, not the index, is what
 * a page costs. Pages are therefore read from a window of recent entries that grows until it
 * holds the page (see `page`), each window one range of an index ordered like the sort.
 *
 * An entry may be written before its task is published: the scheduler writes the entries of a
 * burst of fires ahead of their time, with their claims, so that at the time only the broker's
 * publishing is left (see scheduler.ts). Such an entry is nobody's (`user_id` null) and names
 * the account it is for in `unpublished_for`, so that no account's history lists or counts it,
 * at no cost to those queries (they select by `user_id`); the reads that do not select by account
 * (by id, the administration site's list, the task names) leave out entries that have
 * `unpublished_for`. Once the task is published the entry is given to its account (`reveal`);
 * a fire withdrawn before its time has its entry removed (`dropUnpublished`).
 */
import { MongoServerError, type AnyBulkWriteOperation, type Collection, type Db, type Filter, type IndexSpecification } from 'mongodb';
import { detectEngineTraits } from '../../db/engine-traits.js';
import type { JsonObject, JsonValue } from '../protocol/json.js';
import { WriteBatcher } from '../../db/write-batcher.js';
import { bulkInsertOutcomes } from '../../db/bulk-outcomes.js';
import { signalOption } from '../../db/deadline.js';
import { noDeadline, type Deadline } from '../../lib/deadline.js';
import { escapeRegExp } from '../../lib/regexp.js';
import { READY_STATES, TASK_STATES, isTaskState } from '../results/states.js';

const FINAL_STATES = [...READY_STATES];
/**
 * The states an entry may leave. Listed rather than "not final" because the engine answers `$in`
 * from the index and `$nin` only by reading every entry of the user.
 */
const OPEN_STATES: string[] = TASK_STATES.filter((state) => !READY_STATES.has(state));

/** The order of every listing: newest first, ties (same millisecond) by task id. */
const NEWEST_FIRST = { timestamp: -1, _id: -1 } as const;
/**
 * The windows a page is looked for in: the last minute, then 16 times longer each time (16 min,
 * 4.3 h, 2.8 days, 45 days, 2 years), then the whole history.
 */
const FIRST_WINDOW_MS = 60_000;
const WINDOW_GROWTH = 16;
const LAST_WINDOW_MS = 2 * 365 * 24 * 3600_000;
/**
 * Sorting every match costs less than looking through windows for up to this many matches, and
 * for a page past the newest quarter of them (the last window would span most of them anyway).
 */
const SORT_ALL_UP_TO = 2_000;
const SORT_ALL_FROM_DEPTH = 1 / 4;

/** The listing's indexes: a user's entries, and a user's entries in one state, in listing order. */
const BY_USER = { user_id: 1, ...NEWEST_FIRST } as const;
const BY_STATE = { user_id: 1, state: 1, ...NEWEST_FIRST } as const;
/**
 * Just the fields counts and the unsettled entries are looked up by. DocumentDB keeps one list of
 * documents per distinct key of such an index (a few hundred kB for 100,000 entries, where an
 * ordered index holds an entry per document), and counts tens of thousands of matches from it
 * several times faster; MongoDB counts from the ordered ones without reading a document and
 * needs these not at all.
 */
const COUNT_BY_USER = { user_id: 1 } as const;
const COUNT_BY_STATE = { user_id: 1, state: 1 } as const;
/** Indexes of earlier versions, replaced by the ones above (those by name, before entries were kept by account id). */
const REPLACED_INDEXES = [
  'user_1_timestamp_-1',
  'user_1_state_1_timestamp_-1',
  'user_1_timestamp_-1__id_-1',
  'user_1_state_1_timestamp_-1__id_-1',
  'user_1',
  'user_1_state_1',
];
/** Names looked up per batch when entries kept by name are given account ids. */
const MIGRATION_BATCH = 500;

/** The index each query names, once this process has made sure they exist. */
interface Hints {
  /** For a window of recent entries: the ordered index, read as one range. */
  window(state: string | undefined): IndexSpecification;
  /** For counts, and pages sorted from every match (which read every match either way). */
  all(state: string | undefined): IndexSpecification;
  unsettled: IndexSpecification;
}

/** A query that named an index which is not there (dropped since): it is asked again without. */
const isMissingIndex = (error: unknown): boolean => error instanceof MongoServerError && error.code === 2 && /hint/i.test(error.message);

/**
 * The state to keep for what a result document says. A custom state (a task's own
 * `update_state(state='PROGRESS')`) is only ever set while the task runs, so it counts as STARTED.
 */
export const loggedState = (status: string): string => (isTaskState(status) ? status : 'STARTED');

export interface TaskLogEntry {
  _id: string;
  task_id: string;
  /** The submitting account's id; null for an entry of an earlier version whose name no account bore. */
  user_id: string | null;
  /** The submitter's username at submission, for reading. */
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
  /** Written ahead of its publication, for this account (see the header); absent once published. */
  unpublished_for?: string;
}

/** What every read that does not select by account adds: entries of tasks published (see the header). */
const PUBLISHED = { unpublished_for: { $exists: false } } as const;

interface Settlement {
  taskId: string;
  mayHaveRun: boolean;
}

/**
 * What the administration site's list of every submission may ask for: each text field matches
 * entries that contain it (any case; for `tags`, any one tag), the time a range.
 */
export interface LogBrowseFilter {
  task_name?: string;
  user?: string;
  queue?: string;
  tags?: string;
  timestamp?: { from?: Date; to?: Date };
}
export const LOG_BROWSE_SORTS = ['timestamp', 'task_name', 'user', 'queue', 'tags', 'task_id'] as const;
export interface LogBrowseQuery {
  filter: LogBrowseFilter;
  sortBy: (typeof LOG_BROWSE_SORTS)[number];
  direction: 'asc' | 'desc';
  skip: number;
  limit: number;
}

function browseFilter(f: LogBrowseFilter): Filter<TaskLogEntry> {
  const filter: Record<string, unknown> = { ...PUBLISHED };
  for (const field of ['task_name', 'user', 'queue', 'tags'] as const) {
    const text = f[field];
    if (text !== undefined && text !== '') filter[field] = { $regex: escapeRegExp(text), $options: 'i' };
  }
  const { from, to } = f.timestamp ?? {};
  if (from !== undefined || to !== undefined) filter.timestamp = { ...(from && { $gte: from }), ...(to && { $lte: to }) };
  return filter as Filter<TaskLogEntry>;
}

export interface HistoryFilter {
  /** The account whose history it is. */
  userId: string;
  taskNames?: string[];
  tag?: string;
}

export class TaskLog {
  readonly collection: Collection<TaskLogEntry>;
  private indexed: Promise<unknown> | null = null;
  /** Settles once entries kept by name have their account ids (see the header). */
  private migrated: Promise<void> | null = null;
  private hints: Hints | null = null;
  /** Whether entries written before states were kept have been given one (PENDING, to be read). */
  private statesBackfilled = false;
  /** Concurrent submissions share one insert: the log write is on every submission's path. */
  private readonly inserts: WriteBatcher<TaskLogEntry>;
  /**
   * The entries of submissions the broker did not take, settled together: a channel that closes
   * fails every publish in flight on it at once, and each of them settles its own entry.
   */
  private readonly settlements: WriteBatcher<Settlement>;

  /**
   * `deadline` bounds each read and write a request waits for (MONGO_OPERATION_TIMEOUT_MS), the
   * batched writes too: a batch the engine never answers would otherwise hold every submission
   * queued behind it. `userIdsByName` gives entries of earlier versions their accounts (see the header).
   */
  constructor(
    db: Db,
    private readonly deadline: Deadline = noDeadline,
    private readonly userIdsByName: (usernames: readonly string[]) => Promise<Map<string, string>> = async () => new Map(),
  ) {
    this.collection = db.collection<TaskLogEntry>('task_log');
    this.inserts = new WriteBatcher(async (entries) => {
      try {
        await this.deadline((signal) => this.collection.insertMany([...entries], { ordered: false, ...signalOption(signal) }));
        return bulkInsertOutcomes(entries.length, undefined);
      } catch (error) {
        return bulkInsertOutcomes(entries.length, error);
      }
    });
    this.settlements = new WriteBatcher(async (settlements) => {
      const operations = settlements.map(({ taskId, mayHaveRun }): AnyBulkWriteOperation<TaskLogEntry> =>
        mayHaveRun
          ? { updateOne: { filter: { _id: taskId }, update: { $set: { publish_unconfirmed: true } } } }
          : { deleteOne: { filter: { _id: taskId } } },
      );
      // An unordered bulk write reports the operations that failed the way an unordered insert does.
      try {
        await this.deadline((signal) => this.collection.bulkWrite(operations, { ordered: false, ...signalOption(signal) }));
        return bulkInsertOutcomes(settlements.length, undefined);
      } catch (error) {
        return bulkInsertOutcomes(settlements.length, error);
      }
    });
  }

  async record(entry: Omit<TaskLogEntry, '_id' | 'state'>): Promise<void> {
    void this.ensureIndexes();
    await this.inserts.write({ _id: entry.task_id, ...entry, state: 'PENDING' });
  }

  /**
   * Records many submissions with one unordered insert; each one's error, or null when it was
   * written. `unpublished`: written ahead of the tasks' publication, seen by nobody until `reveal`.
   */
  async recordMany(entries: readonly Omit<TaskLogEntry, '_id' | 'state'>[], unpublished = false): Promise<(Error | null)[]> {
    void this.ensureIndexes();
    const docs = entries.map((entry): TaskLogEntry =>
      unpublished && entry.user_id !== null
        ? { _id: entry.task_id, ...entry, user_id: null, unpublished_for: entry.user_id, state: 'PENDING' }
        : { _id: entry.task_id, ...entry, state: 'PENDING' },
    );
    try {
      await this.deadline((signal) => this.collection.insertMany(docs, { ordered: false, ...signalOption(signal) }));
      return bulkInsertOutcomes(docs.length, undefined);
    } catch (error) {
      try {
        return bulkInsertOutcomes(docs.length, error);
      } catch (whole) {
        const failure = whole instanceof Error ? whole : new Error(String(whole));
        return docs.map(() => failure);
      }
    }
  }

  /**
   * The history's own index and the one that filters it by state, both ordered exactly like the
   * listing (newest first, then by id), on DocumentDB also those it counts from, and a state for
   * entries written before states were kept. The indexes of earlier versions are dropped. Once
   * per process; retried after a failure.
   */
  ensureIndexes(): Promise<unknown> {
    this.indexed ??= Promise.all([
      this.migrateToAccountIds(),
      detectEngineTraits(this.collection.db.client).then(async ({ compoundIndexOptions, countsFromEqualityIndexes }) => {
        await this.collection.createIndex(BY_USER, compoundIndexOptions);
        await this.collection.createIndex(BY_STATE, compoundIndexOptions);
        if (countsFromEqualityIndexes) {
          await this.collection.createIndex(COUNT_BY_USER, compoundIndexOptions);
          await this.collection.createIndex(COUNT_BY_STATE, compoundIndexOptions);
        }
        for (const name of REPLACED_INDEXES) await this.collection.dropIndex(name).catch(() => undefined);
        const [byUser, byState] = countsFromEqualityIndexes ? [COUNT_BY_USER, COUNT_BY_STATE] : [BY_USER, BY_STATE];
        this.hints = {
          window: (state) => (state === undefined ? BY_USER : BY_STATE),
          all: (state) => (state === undefined ? byUser : byState),
          unsettled: byState,
        };
      }),
      this.collection.updateMany({ state: { $exists: false } }, { $set: { state: 'PENDING' } }).then(() => {
        this.statesBackfilled = true;
      }),
    ]).catch(() => {
      this.indexed = null;
    });
    return this.indexed;
  }

  /**
   * Gives every entry kept by name only (written before entries were kept by account id) the id
   * of the account that bears its name now, or null. Entries written since have one already.
   * Once per process, and every read of a user's entries waits for it; retried after a failure.
   */
  migrateToAccountIds(): Promise<void> {
    this.migrated ??= (async () => {
      // Under the deadline like every read a request waits for: reads of the history wait for this.
      const legacy = await this.deadline(() => this.collection.distinct('user', { user_id: { $exists: false } }));
      const names = legacy.filter((n): n is string => typeof n === 'string');
      for (let i = 0; i < names.length; i += MIGRATION_BATCH) {
        const batch = names.slice(i, i + MIGRATION_BATCH);
        const ids = await this.userIdsByName(batch);
        const updates = batch.map((name) => ({
          updateMany: { filter: { user: name, user_id: { $exists: false } }, update: { $set: { user_id: ids.get(name) ?? null } } },
        }));
        await this.deadline(() => this.collection.bulkWrite(updates, { ordered: false }));
      }
      // An entry whose name is not a string (made by hand) belongs to nobody.
      await this.deadline(() => this.collection.updateMany({ user_id: { $exists: false } }, { $set: { user_id: null } }));
    })().catch((error: unknown) => {
      this.migrated = null;
      throw error;
    });
    return this.migrated;
  }

  /** The entry of a published task (see the header). */
  get(taskId: string): Promise<TaskLogEntry | null> {
    return this.deadline((signal) => this.collection.findOne({ _id: taskId, ...PUBLISHED }, { signal }));
  }

  /** The entry, published or written ahead of its publication (for the scheduler, which wrote it). */
  getWritten(taskId: string): Promise<TaskLogEntry | null> {
    return this.deadline((signal) => this.collection.findOne({ _id: taskId }, { signal }));
  }

  /**
   * Gives entries written ahead (see the header) to their accounts once their tasks are
   * published: one update per account. Entries given already, or removed, are left alone.
   */
  async reveal(entries: readonly { taskId: string; userId: string }[]): Promise<void> {
    const byUser = new Map<string, string[]>();
    for (const { taskId, userId } of entries) {
      const ids = byUser.get(userId);
      if (ids === undefined) byUser.set(userId, [taskId]);
      else ids.push(taskId);
    }
    for (const [userId, ids] of byUser) {
      await this.deadline((signal) =>
        this.collection.updateMany(
          { _id: { $in: ids }, unpublished_for: userId },
          { $set: { user_id: userId }, $unset: { unpublished_for: '' } },
          signalOption(signal),
        ),
      );
    }
  }

  /**
   * Entries written ahead and still unpublished, written before `before`, oldest first, at most
   * `limit` (the scheduler's sweep for those a dead process left). They have no account yet, so
   * the index by account finds them.
   */
  unpublishedBefore(before: Date, limit: number): Promise<TaskLogEntry[]> {
    return this.deadline((signal) =>
      this.collection
        .find({ user_id: null, unpublished_for: { $exists: true }, timestamp: { $lt: before } }, signalOption(signal))
        .sort({ timestamp: 1 })
        .limit(limit)
        .toArray(),
    );
  }

  /** Removes entries written ahead whose tasks will not be published (entries of published tasks are left alone). */
  async dropUnpublished(taskIds: readonly string[]): Promise<void> {
    if (taskIds.length === 0) return;
    await this.deadline((signal) =>
      this.collection.deleteMany({ _id: { $in: [...taskIds] }, unpublished_for: { $exists: true } }, signalOption(signal)),
    );
  }

  /** With `state`, only entries whose recorded state is that one. */
  private filter(f: HistoryFilter, state?: string): Filter<TaskLogEntry> {
    const filter: Filter<TaskLogEntry> = { user_id: f.userId };
    if (state !== undefined) filter.state = state;
    if (f.taskNames !== undefined && f.taskNames.length > 0) filter.task_name = { $in: f.taskNames };
    if (f.tag !== undefined) filter.tags = f.tag;
    return filter;
  }

  async count(f: HistoryFilter, state?: string): Promise<number> {
    await this.migrateToAccountIds();
    return this.hinted(this.hints?.all(state), (hint) =>
      this.deadline((signal) => this.collection.countDocuments(this.filter(f, state), hint ? { hint, signal } : { signal })),
    );
  }

  /**
   * Newest first. `matches`, when given, is the number of entries the filter matches (the count
   * read alongside); it spares looking through windows that cannot hold a full page.
   *
   * A page of `limit` after `skip` is read from the entries since a moment (a window), first of
   * the last minute, then of longer and longer spans. Every entry outside a window is older than
   * every entry inside it, so once a window holds `skip + limit` matches its first ones in this
   * order are exactly the page; a window that holds fewer is followed by a longer one, the last
   * being the whole history (the last page, shorter than `limit`, is always read that way).
   */
  async page(f: HistoryFilter, skip: number, limit: number, state?: string, matches?: Promise<number>): Promise<TaskLogEntry[]> {
    await this.migrateToAccountIds();
    const filter = this.filter(f, state);
    // The count is not waited for (except for a deep page, which few windows can hold): once
    // known, it ends the windows that cannot hold the page.
    let total: number | undefined;
    matches?.then(
      (n) => (total = n),
      () => undefined,
    );
    if (matches !== undefined && skip >= SORT_ALL_UP_TO) total = await matches;
    const sortAll = () => limit <= 0 || (total !== undefined && (total <= SORT_ALL_UP_TO || skip + limit > total * SORT_ALL_FROM_DEPTH));
    for (let span = FIRST_WINDOW_MS; !sortAll() && span <= LAST_WINDOW_MS; span *= WINDOW_GROWTH) {
      const rows = await this.read({ ...filter, timestamp: { $gte: new Date(Date.now() - span) } }, skip, limit, this.hints?.window(state));
      if (rows.length === limit) return rows;
    }
    return this.read(filter, skip, limit, this.hints?.all(state));
  }

  private read(filter: Filter<TaskLogEntry>, skip: number, limit: number, index: IndexSpecification | undefined): Promise<TaskLogEntry[]> {
    return this.hinted(index, (hint) =>
      this.deadline((signal) => {
        const cursor = this.collection.find(filter, { signal }).sort(NEWEST_FIRST);
        if (hint) cursor.hint(hint);
        if (skip > 0) cursor.skip(skip);
        if (limit > 0) cursor.limit(limit);
        return cursor.toArray();
      }),
    );
  }

  /**
   * Runs `query` naming `hint`, the index it is meant for: an engine's planner may otherwise
   * take an index with the same leading fields that reads far more entries. Without the index
   * (dropped since it was made), asks again without it and makes the indexes again.
   */
  private async hinted<T>(hint: IndexSpecification | undefined, query: (hint: IndexSpecification | undefined) => Promise<T>): Promise<T> {
    try {
      return await query(hint);
    } catch (error) {
      if (hint === undefined || !isMissingIndex(error)) throw error;
      this.hints = null;
      this.indexed = null;
      void this.ensureIndexes();
      return query(undefined);
    }
  }

  /** The user's entries whose state may still change (not ready, or never read), with it. */
  async unsettled(userId: string): Promise<{ id: string; state: string | null }[]> {
    await this.migrateToAccountIds();
    // Until older entries have a state, `null` in `$in` finds them too (at some cost).
    const open = { user_id: userId, state: { $in: this.statesBackfilled ? OPEN_STATES : [...OPEN_STATES, null] } } as Filter<TaskLogEntry>;
    const rows = await this.hinted(this.hints?.unsettled, (hint) =>
      this.deadline((signal) => this.collection.find(open, { projection: { state: 1 }, signal, ...(hint ? { hint } : {}) }).toArray()),
    );
    return rows.map((row) => ({ id: row._id, state: row.state ?? null }));
  }

  /** The entries of the accounts `userIds` whose logged state is not final (queued, running, or never read). */
  async open(userIds: readonly string[]): Promise<TaskLogEntry[]> {
    await this.migrateToAccountIds();
    const filter = { user_id: { $in: [...userIds] }, state: { $nin: FINAL_STATES } } as Filter<TaskLogEntry>;
    return this.deadline((signal) => this.collection.find(filter, { signal }).toArray());
  }

  /** The entries of the tasks `ids` (id → entry); tasks the log does not hold are absent. */
  async entries(ids: readonly string[]): Promise<Map<string, TaskLogEntry>> {
    if (ids.length === 0) return new Map();
    const rows = await this.deadline((signal) => this.collection.find({ _id: { $in: [...ids] }, ...PUBLISHED }, { signal }).toArray());
    return new Map(rows.map((row) => [row._id, row]));
  }

  /** The ids of the account's latest `limit` submissions, newest first. */
  async latestIds(userId: string, limit: number): Promise<string[]> {
    await this.migrateToAccountIds();
    const rows = await this.deadline((signal) =>
      this.collection
        .find({ user_id: userId }, { projection: { _id: 1 }, signal })
        .sort({ timestamp: -1 })
        .limit(limit)
        .toArray(),
    );
    return rows.map((row) => row._id);
  }

  /** Every account's entries, for the administration site's list (see LogBrowseFilter). */
  browse(query: LogBrowseQuery): Promise<TaskLogEntry[]> {
    const direction = query.direction === 'asc' ? 1 : -1;
    return this.deadline((signal) =>
      this.collection
        .find(browseFilter(query.filter), { signal })
        .sort({ [query.sortBy]: direction, _id: direction })
        .skip(query.skip)
        .limit(query.limit)
        .toArray(),
    );
  }

  browseCount(filter: LogBrowseFilter): Promise<number> {
    return this.deadline((signal) => this.collection.countDocuments(browseFilter(filter), { signal }));
  }

  /** The number of entries, from the collection's metadata (cheap, possibly a little off). */
  estimatedSize(): Promise<number> {
    return this.deadline((signal) => this.collection.estimatedDocumentCount(signalOption(signal)));
  }

  /** The names of every task ever submitted (what permissions may be granted on before a worker lists it). */
  async taskNames(): Promise<string[]> {
    const names: unknown[] = await this.deadline((signal) => this.collection.distinct('task_name', PUBLISHED, signalOption(signal)));
    return names.filter((n): n is string => typeof n === 'string');
  }

  /** Records newly read states; an entry already in a final state is never changed. */
  async recordStates(states: { id: string; state: string }[]): Promise<void> {
    if (states.length === 0) return;
    const updates: AnyBulkWriteOperation<TaskLogEntry>[] = states.map(({ id, state }) => ({
      updateOne: { filter: { _id: id, state: { $nin: FINAL_STATES } }, update: { $set: { state } } },
    }));
    await this.deadline((signal) => this.collection.bulkWrite(updates, { ordered: false, ...signalOption(signal) }));
  }

  /**
   * Settles the entry of a submission the broker did not confirm: removed when its message
   * certainly never reached the broker, marked (`publish_unconfirmed`) when the broker may or may
   * not have queued it, so the task can still be found and revoked.
   */
  settleRefused(taskId: string, mayHaveRun: boolean): Promise<void> {
    return this.settlements.write({ taskId, mayHaveRun });
  }
}
