/**
 * The repository of schedules (`schedules`) and their run log (`schedule_runs`) in the service
 * database. The run log is what makes a fire happen once on any number of API processes: a fire's
 * entry has the key `<schedule id>@<fire time>`, so inserting it is an atomic claim that exactly
 * one process wins (see scheduler.ts for the whole protocol).
 *
 * A schedule keeps `due_at`, the moment the scheduler next has to look at it (its next fire plus
 * its jitter, or a re-check for a buffered run), null while paused or finished: the scheduler's
 * tick is one indexed range query on it.
 */
import { randomUUID } from 'node:crypto';
import type { AnyBulkWriteOperation, Collection, Db, Document, Filter, UpdateFilter } from 'mongodb';
import { bulkInsertOutcomes } from '../../db/bulk-outcomes.js';
import { WriteBatcher } from '../../db/write-batcher.js';
import type { Timing } from './timing.js';
import type { IntervalPeriod, OverlapPolicy } from './model.js';

export interface ScheduleDoc {
  _id: string;
  name: string;
  owner_id: string;
  /** The owner's name when the schedule was made, for reading. */
  owner: string;
  task: string;
  args_json: string;
  kwargs_json: string;
  queue: string | null;
  timing: Timing;
  interval_as: { every: number; period: IntervalPeriod } | null;
  overlap: OverlapPolicy;
  catch_up_window_s: number;
  jitter_s: number;
  start_time: Date | null;
  end_time: Date | null;
  max_runs: number | null;
  expires_s: number | null;
  paused: boolean;
  note: string;
  created_at: Date;
  updated_at: Date;
  /** The next fire's own time (null: no more fires). */
  next_fire_at: Date | null;
  /** When the scheduler looks at it next; null while paused or finished. */
  due_at: Date | null;
  /** The time of the last fire dealt with (published, skipped, refused or missed). */
  last_fire_at: Date | null;
  /** Fires published so far (not counting "run now"): what max_runs limits. */
  total_runs: number;
  missed_total: number;
  /** The task of the last published fire, for the overlap policies. */
  last_task_id: string | null;
  last_outcome: RunState | null;
  /** Why the last fire was not published (owner inactive, right revoked, broker refused...). */
  last_reason: string | null;
  /** Fires in a row that were refused or failed to publish. */
  failure_streak: number;
  /** A fire held back by `buffer_one` until the last run finishes: its run id. */
  buffered_run: string | null;
  finished: boolean;
  /** Names the last conditional update applied (see ConditionalUpdates). */
  write_token?: string;
}

export const RUN_STATES = ['claimed', 'published', 'skipped', 'buffered', 'refused', 'failed', 'missed'] as const;
export type RunState = (typeof RUN_STATES)[number];
export type RunKind = 'scheduled' | 'catch_up' | 'manual' | 'missed';

export interface RunDoc {
  _id: string;
  schedule_id: string;
  kind: RunKind;
  /** The fire's own time (for a missed range: its first). */
  fire_at: Date;
  state: RunState;
  /** Chosen when the fire is claimed, so a process that takes the claim over publishes under the same id. */
  task_id: string | null;
  claimed_by: string;
  claimed_at: Date;
  /** A claim not completed by then may be taken over by another process. */
  lease_until: Date;
  published_at: Date | null;
  /** Publication time minus the time the fire was due (its own time plus jitter). */
  lateness_ms: number | null;
  reason: string | null;
  /** A catch-up run: how many fires it stands for. A missed range: how many fires it records. */
  count: number;
  /** Set when the claim was completed by another process than the one that made it. */
  recovered: boolean;
  /**
   * When the fire is due (its own time plus jitter), for fires claimed in bulk: those of a burst
   * may be published ahead of it (see the scheduler's MAX_LEAD_MS).
   */
  due_at?: Date;
  /** Names the last conditional update applied (see ConditionalUpdates). */
  write_token?: string;
}

/**
 * Claims whose history entries were written ahead (see the scheduler), written down just before
 * their messages go to the broker, one document for a chunk of them: a process taking one of
 * them over counts its fire as published. Removed once the claims are completed.
 */
export interface PublishingDoc {
  _id: string;
  /** The claims' run-log keys. */
  runs: string[];
  by: string;
  at: Date;
}

/** Documents per bulk command when many are written at once. */
const BULK_CHUNK = 1_000;

/** A conditional update that found nothing matching its filter. */
const NOT_MATCHED = new Error('no document matched the update');

interface PendingUpdate<T> {
  id: string;
  filter: Filter<T>;
  update: UpdateFilter<T>;
  token: string;
}

/**
 * Compare-and-set updates of single documents, coalesced: the ones asked for while a batch is in
 * flight leave together as one unordered bulk write (FerretDB commits each command as one
 * PostgreSQL transaction, so a fire's writes one by one would bound the fires per second). Each
 * caller still learns whether its own update matched: when the batch matched fewer documents than
 * it had updates, the documents are read back by the token each update wrote.
 */
class ConditionalUpdates<T extends Document & { _id: string; write_token?: string }> {
  private readonly batcher: WriteBatcher<PendingUpdate<T>>;

  constructor(private readonly collection: Collection<T>) {
    this.batcher = new WriteBatcher((items) => this.flush(items));
  }

  /** One unordered bulk write of `items`; each one's outcome (null: applied). */
  private async flush(items: readonly PendingUpdate<T>[]): Promise<(Error | null)[]> {
    const operations = items.map((i): AnyBulkWriteOperation<T> => ({
      updateOne: {
        filter: { ...i.filter, _id: i.id } as Filter<T>,
        update: { ...i.update, $set: { ...(i.update.$set ?? {}), write_token: i.token } } as UpdateFilter<T>,
      },
    }));
    // An update refused by a unique index (a schedule renamed to a name its owner has) fails
    // alone: its own error, while the others are told from their tokens.
    let failed: (Error | null)[] = items.map(() => null);
    try {
      const result = await this.collection.bulkWrite(operations, { ordered: false });
      if (result.matchedCount === items.length) return failed;
    } catch (error) {
      failed = bulkInsertOutcomes(items.length, error);
    }
    const applied = await this.collection
      .find({ _id: { $in: items.map((i) => i.id) }, write_token: { $in: items.map((i) => i.token) } } as Filter<T>, {
        projection: { _id: 1, write_token: 1 },
      })
      .toArray();
    const done = new Set(applied.map((d) => `${String(d._id)} ${String(d.write_token)}`));
    return items.map((i, n) => failed[n] ?? (done.has(`${i.id} ${i.token}`) ? null : NOT_MATCHED));
  }

  /**
   * Applies many at once, as one unordered bulk write per chunk, with the chunks side by side
   * (a burst of fires advances thousands together); whether each was applied (one refused by
   * the database, like one that matched nothing, was not).
   */
  async applyMany(items: readonly { id: string; filter: Filter<T>; update: UpdateFilter<T> }[]): Promise<boolean[]> {
    const chunks: PendingUpdate<T>[][] = [];
    for (let i = 0; i < items.length; i += BULK_CHUNK) {
      chunks.push(items.slice(i, i + BULK_CHUNK).map((item) => ({ ...item, token: randomUUID() })));
    }
    const outcomes = await Promise.all(chunks.map((chunk) => this.flush(chunk)));
    return outcomes.flat().map((outcome) => outcome === null);
  }

  /** Applies `update` to the document `id` if it matches `filter`; whether it did. */
  async apply(id: string, filter: Filter<T>, update: UpdateFilter<T>): Promise<boolean> {
    try {
      await this.batcher.write({ id, filter, update, token: randomUUID() });
      return true;
    } catch (error) {
      if (error === NOT_MATCHED) return false;
      throw error;
    }
  }
}

/** The server's code for a unique index refusing a write (read from the error, so no driver class is needed here). */
const DUPLICATE_KEY = 11000;
export const isDuplicateKey = (error: unknown): boolean =>
  typeof error === 'object' && error !== null && (error as { code?: unknown }).code === DUPLICATE_KEY;

/** A fire's run-log key. */
export const runKey = (scheduleId: string, fireAt: Date): string => `${scheduleId}@${fireAt.toISOString()}`;

export class ScheduleStore {
  readonly schedules: Collection<ScheduleDoc>;
  readonly runs: Collection<RunDoc>;
  /** Few documents, each kept for the seconds a burst's publishing takes (or until a claim left by a process that died is taken over): read without an index. */
  readonly publishing: Collection<PublishingDoc>;

  private readonly claims: WriteBatcher<RunDoc>;
  private readonly scheduleUpdates: ConditionalUpdates<ScheduleDoc>;
  private readonly runUpdates: ConditionalUpdates<RunDoc>;

  constructor(db: Db) {
    this.schedules = db.collection<ScheduleDoc>('schedules');
    this.runs = db.collection<RunDoc>('schedule_runs');
    this.publishing = db.collection<PublishingDoc>('schedule_publishing');
    // Claims made at the same time (a minute's burst) are inserted together, each told whether its
    // own entry was written or already there.
    this.claims = new WriteBatcher(async (runs) => {
      try {
        await this.runs.insertMany([...runs], { ordered: false });
        return bulkInsertOutcomes(runs.length, undefined);
      } catch (error) {
        return bulkInsertOutcomes(runs.length, error);
      }
    });
    this.scheduleUpdates = new ConditionalUpdates(this.schedules);
    this.runUpdates = new ConditionalUpdates(this.runs);
  }

  async ensureIndexes(): Promise<void> {
    // One command per collection: FerretDB can refuse index builds on one collection running
    // side by side ("deadlock detected").
    await Promise.all([
      this.schedules.createIndexes([
        { key: { due_at: 1 }, name: 'due_at' },
        { key: { owner_id: 1, name: 1 }, name: 'owner_name', unique: true },
        // The changes made since a burst was claimed ahead (see the scheduler).
        { key: { updated_at: 1 }, name: 'updated_at' },
      ]),
      this.runs.createIndexes([
        { key: { schedule_id: 1, fire_at: -1 }, name: 'schedule_fire' },
        // Claims only (few at any time): the sweep for those a dead process left (see the scheduler).
        { key: { lease_until: 1 }, name: 'open_claims', partialFilterExpression: { state: 'claimed' } },
      ]),
    ]);
  }

  /**
   * The ids and due times of the schedules due after `after` (none: any time) up to `until`,
   * soonest first: what a tick reads before it fetches the schedules it will deal with.
   */
  dueIds(after: Date | null, until: Date, limit: number): Promise<{ _id: string; due_at: Date }[]> {
    return this.schedules
      .find({ due_at: after === null ? { $lte: until } : { $gt: after, $lte: until } }, { projection: { _id: 1, due_at: 1 } })
      .sort({ due_at: 1, _id: 1 })
      .limit(limit)
      .toArray() as Promise<{ _id: string; due_at: Date }[]>;
  }

  /** The soonest due time of any schedule (null: none is due ever, all paused or finished). */
  async soonestDue(): Promise<Date | null> {
    const first = await this.schedules.findOne(
      { due_at: { $gte: new Date(0) } },
      { projection: { _id: 0, due_at: 1 }, sort: { due_at: 1 } },
    );
    return first?.due_at ?? null;
  }

  /** As dueIds, for the schedules after `after` in the order (due time, id): the next page of a look ahead. */
  dueIdsAfter(after: { due_at: Date; _id: string }, until: Date, limit: number): Promise<{ _id: string; due_at: Date }[]> {
    return this.schedules
      .find(
        {
          due_at: { $gte: after.due_at, $lte: until },
          $or: [{ due_at: { $gt: after.due_at } }, { _id: { $gt: after._id } }],
        },
        { projection: { _id: 1, due_at: 1 } },
      )
      .sort({ due_at: 1, _id: 1 })
      .limit(limit)
      .toArray() as Promise<{ _id: string; due_at: Date }[]>;
  }

  /** The schedules `ids`, read in chunks side by side (the order is not kept). */
  async getMany(ids: readonly string[]): Promise<ScheduleDoc[]> {
    const chunks: string[][] = [];
    for (let i = 0; i < ids.length; i += BULK_CHUNK) chunks.push(ids.slice(i, i + BULK_CHUNK));
    return (await Promise.all(chunks.map((chunk) => this.schedules.find({ _id: { $in: chunk } }).toArray()))).flat();
  }

  /** When each schedule changed through the service since `since` (its `updated_at`), by id. */
  async changedSince(since: Date): Promise<Map<string, number>> {
    const changed = await this.schedules.find({ updated_at: { $gte: since } }, { projection: { _id: 1, updated_at: 1 } }).toArray();
    return new Map(changed.map((d) => [d._id, d.updated_at.getTime()]));
  }

  get(id: string): Promise<ScheduleDoc | null> {
    return this.schedules.findOne({ _id: id });
  }

  /** Inserts a new schedule; false when its owner already has one of that name. */
  async insert(doc: ScheduleDoc): Promise<boolean> {
    try {
      await this.schedules.insertOne(doc);
      return true;
    } catch (error) {
      if (isDuplicateKey(error)) return false;
      throw error;
    }
  }

  /** Applies `update` when the schedule still matches `expect`; whether it did. */
  updateIf(id: string, expect: Filter<ScheduleDoc>, update: UpdateFilter<ScheduleDoc>): Promise<boolean> {
    return this.scheduleUpdates.apply(id, expect, update);
  }

  async delete(id: string): Promise<boolean> {
    const result = await this.schedules.deleteOne({ _id: id });
    await this.runs.deleteMany({ schedule_id: id });
    return result.deletedCount === 1;
  }

  /** Claims a fire: true for the one caller whose insert made the entry. */
  async claim(run: RunDoc): Promise<boolean> {
    try {
      await this.claims.write(run);
      return true;
    } catch (error) {
      if (isDuplicateKey(error)) return false;
      throw error;
    }
  }

  /**
   * Claims many fires with one unordered insert per chunk: for each, whether the caller won it
   * (false when the entry was there already, or the database refused it).
   */
  async claimMany(runs: readonly RunDoc[]): Promise<boolean[]> {
    const chunks: RunDoc[][] = [];
    for (let i = 0; i < runs.length; i += BULK_CHUNK) chunks.push(runs.slice(i, i + BULK_CHUNK));
    const outcomes = await Promise.all(
      chunks.map(async (chunk) => {
        try {
          await this.runs.insertMany(chunk, { ordered: false });
          return bulkInsertOutcomes(chunk.length, undefined);
        } catch (error) {
          return bulkInsertOutcomes(chunk.length, error);
        }
      }),
    );
    return outcomes.flat().map((outcome) => outcome === null);
  }

  /**
   * The schedule's fires claimed or published that are not due yet (the ones a burst may have
   * published ahead of their time, see RunDoc.due_at).
   */
  notDueYet(scheduleId: string, now: Date): Promise<RunDoc[]> {
    return this.runs.find({ schedule_id: scheduleId, state: { $in: ['claimed', 'published'] }, due_at: { $gt: now } }).toArray();
  }

  /** Removes run-log entries, whoever holds them. */
  async removeRuns(ids: readonly string[]): Promise<void> {
    if (ids.length > 0) await this.runs.deleteMany({ _id: { $in: [...ids] } });
  }

  /** Removes the caller's claims that it decided not to publish (never published, so nothing is lost). */
  async releaseClaims(ids: readonly string[], by: string): Promise<void> {
    if (ids.length > 0) await this.runs.deleteMany({ _id: { $in: [...ids] }, claimed_by: by, state: 'claimed' });
  }

  /**
   * Writes down that the claims `ids` are being published (see PublishingDoc), with one insert;
   * resolves with the document's id, for `publishedAll`.
   */
  async markPublishing(ids: readonly string[], by: string): Promise<string> {
    const doc: PublishingDoc = { _id: randomUUID(), runs: [...ids], by, at: new Date() };
    await this.publishing.insertOne(doc);
    return doc._id;
  }

  /** Whether the claim `id` was written down as being published (markPublishing). */
  async markedPublishing(id: string): Promise<boolean> {
    return (await this.publishing.findOne({ runs: id }, { projection: { _id: 1 } })) !== null;
  }

  /** Of the claims `ids`, those some mark says are being published (markPublishing). */
  async markedAmong(ids: readonly string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const marks = await this.publishing.find({ runs: { $in: [...ids] } }, { projection: { runs: 1 } }).toArray();
    const asked = new Set(ids);
    return new Set(marks.flatMap((m) => m.runs).filter((id) => asked.has(id)));
  }

  /** Removes the marks `markIds` once their claims are completed. */
  async publishedAll(markIds: readonly string[]): Promise<void> {
    if (markIds.length > 0) await this.publishing.deleteMany({ _id: { $in: [...markIds] } });
  }

  /** Of the claims `ids`, those still the caller's (a schedule deleted takes its claims with it), read in chunks side by side. */
  async stillClaimed(ids: readonly string[], by: string): Promise<Set<string>> {
    const chunks: string[][] = [];
    for (let i = 0; i < ids.length; i += BULK_CHUNK) chunks.push(ids.slice(i, i + BULK_CHUNK));
    const found = await Promise.all(
      chunks.map((chunk) =>
        this.runs.find({ _id: { $in: chunk }, claimed_by: by, state: 'claimed' }, { projection: { _id: 1 } }).toArray(),
      ),
    );
    return new Set(found.flat().map((r) => r._id));
  }

  /**
   * Completes many of the caller's own claims at once; whether each still was the caller's. The
   * fires of a burst mostly complete alike (published at one moment, as late): those with the same
   * fields are one `updateMany` per chunk, which the engine applies as one statement, where one
   * update each costs a statement each.
   */
  async completeMany(items: readonly { id: string; by: string; fields: Partial<RunDoc> }[]): Promise<boolean[]> {
    const groups = new Map<string, number[]>();
    items.forEach((item, n) => {
      const key = JSON.stringify([item.by, item.fields]);
      const group = groups.get(key);
      if (group === undefined) groups.set(key, [n]);
      else group.push(n);
    });
    const done: boolean[] = items.map(() => false);
    const chunks: number[][] = [];
    for (const group of groups.values()) for (let i = 0; i < group.length; i += BULK_CHUNK) chunks.push(group.slice(i, i + BULK_CHUNK));
    // One after another: each is one statement the engine is busy with, so two at once finish no sooner.
    for (const chunk of chunks) {
      const { by, fields } = items[chunk[0]!]!;
      const ids = chunk.map((n) => items[n]!.id);
      const result = await this.runs.updateMany({ _id: { $in: ids }, claimed_by: by, state: 'claimed' }, { $set: fields });
      if (result.matchedCount === chunk.length) {
        for (const n of chunk) done[n] = true;
        continue;
      }
      // Some were not the caller's any more (taken over once their lease ran out): an entry the
      // caller completed is still its own and no longer a claim.
      const mine = await this.runs
        .find({ _id: { $in: ids }, claimed_by: by, state: { $ne: 'claimed' } }, { projection: { _id: 1 } })
        .toArray();
      const completed = new Set(mine.map((r) => r._id));
      for (const n of chunk) done[n] = completed.has(items[n]!.id);
    }
    return done;
  }

  /** Applies many compare-and-set updates of schedules at once; whether each applied. */
  updateManyIf(items: readonly { id: string; expect: Filter<ScheduleDoc>; update: UpdateFilter<ScheduleDoc> }[]): Promise<boolean[]> {
    return this.scheduleUpdates.applyMany(items.map((i) => ({ id: i.id, filter: i.expect, update: i.update })));
  }

  /** The run-log entries `ids` (those that exist). */
  async getRuns(ids: readonly string[]): Promise<RunDoc[]> {
    if (ids.length === 0) return [];
    return this.runs.find({ _id: { $in: [...ids] } }).toArray();
  }

  /** Of `scheduleIds`, those with a claim still open on a fire from their `from` on (one query for all). */
  async withOpenClaims(from: ReadonlyMap<string, Date>): Promise<Set<string>> {
    if (from.size === 0) return new Set();
    const open = await this.runs
      .find({ schedule_id: { $in: [...from.keys()] }, state: 'claimed' }, { projection: { schedule_id: 1, fire_at: 1 } })
      .toArray();
    return new Set(open.filter((r) => r.fire_at.getTime() >= from.get(r.schedule_id)!.getTime()).map((r) => r.schedule_id));
  }

  /** The earliest claim still open of the schedule's fires from `from` on (the index on schedule and fire time answers it). */
  openClaim(scheduleId: string, from: Date): Promise<RunDoc | null> {
    return this.runs.findOne({ schedule_id: scheduleId, fire_at: { $gte: from }, state: 'claimed' }, { sort: { fire_at: 1 } });
  }

  /** Claims whose lease ran out before `before`, oldest first, at most `limit` (the sweep). */
  expiredClaims(before: Date, limit: number): Promise<RunDoc[]> {
    return this.runs
      .find({ state: 'claimed', lease_until: { $lt: before } })
      .sort({ lease_until: 1 })
      .limit(limit)
      .toArray();
  }

  /**
   * Removes a claim, or completes it with `fields`, only while it is still the claim the caller
   * read (still open, its lease not renewed by a process taking it over); whether it did.
   */
  async settleLeftClaim(id: string, leaseUntil: Date, fields: Partial<RunDoc> | null): Promise<boolean> {
    const filter = { _id: id, state: 'claimed' as const, lease_until: leaseUntil };
    if (fields === null) return (await this.runs.deleteOne(filter)).deletedCount === 1;
    return (await this.runs.updateOne(filter, { $set: fields })).modifiedCount === 1;
  }

  /** The run-log entries of the schedules `scheduleIds` under the task ids `taskIds` (the index on schedule and fire time answers it). */
  runsOfTasks(scheduleIds: readonly string[], taskIds: readonly string[]): Promise<RunDoc[]> {
    if (scheduleIds.length === 0 || taskIds.length === 0) return Promise.resolve([]);
    return this.runs.find({ schedule_id: { $in: [...scheduleIds] }, task_id: { $in: [...taskIds] } }).toArray();
  }

  /** Marks written before `before` (markPublishing), at most `limit`. */
  marksBefore(before: Date, limit: number): Promise<PublishingDoc[]> {
    return this.publishing
      .find({ at: { $lt: before } })
      .limit(limit)
      .toArray();
  }

  /** Of the run-log entries `ids`, those still open claims. */
  async openAmong(ids: readonly string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const open = await this.runs.find({ _id: { $in: [...ids] }, state: 'claimed' }, { projection: { _id: 1 } }).toArray();
    return new Set(open.map((r) => r._id));
  }

  getRun(id: string): Promise<RunDoc | null> {
    return this.runs.findOne({ _id: id });
  }

  /** Takes over a claim whose lease ran out (its process died): true for the one caller that did. */
  async takeOver(id: string, by: string, now: Date, leaseUntil: Date): Promise<boolean> {
    const result = await this.runs.updateOne(
      { _id: id, state: 'claimed', lease_until: { $lt: now } },
      { $set: { claimed_by: by, lease_until: leaseUntil, recovered: true } },
    );
    return result.modifiedCount === 1;
  }

  /** Claims a buffered run for publishing: true for the one caller that did. */
  async unbuffer(id: string, by: string, leaseUntil: Date): Promise<boolean> {
    const result = await this.runs.updateOne(
      { _id: id, state: 'buffered' },
      { $set: { state: 'claimed', claimed_by: by, lease_until: leaseUntil } },
    );
    return result.modifiedCount === 1;
  }

  /** Completes the caller's own claim; false when it lost it meanwhile (its lease ran out and was taken over). */
  complete(id: string, by: string, fields: Partial<RunDoc>): Promise<boolean> {
    return this.runUpdates.apply(id, { claimed_by: by, state: 'claimed' }, { $set: fields });
  }

  /** Records fires that passed without a run; a second process recording the same range changes nothing. */
  async recordMissed(run: RunDoc): Promise<boolean> {
    return this.claim(run);
  }

  recentRuns(scheduleId: string, skip: number, limit: number): Promise<RunDoc[]> {
    return this.runs.find({ schedule_id: scheduleId }).sort({ fire_at: -1, _id: -1 }).skip(skip).limit(limit).toArray();
  }

  countRuns(scheduleId: string): Promise<number> {
    return this.runs.countDocuments({ schedule_id: scheduleId });
  }
}
