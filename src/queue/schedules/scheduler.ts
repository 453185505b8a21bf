/**
 * The scheduler: runs inside every API process, with no coordinator, and fires each schedule's
 * fires exactly once however many processes run it. Every `tickMs` it asks the database for the
 * schedules due (one indexed query on `due_at`; with none due, less often, see IDLE_POLL_MS) and
 * deals with each, one fire at a time:
 *
 *   1. What the fire is: `planDue` (plan.ts) says on time, catch-up, or missed.
 *   2. Claim: insert the fire's run-log entry, keyed `<schedule>@<fire time>`, state `claimed`,
 *      with the task id it will be published under and a lease. The key is unique, so one process
 *      wins; the others see the entry and leave the fire alone.
 *   3. Publish through the queue's submission path (history entry, then the broker's confirm), as
 *      the owner, whose account and rights are read now: an inactive owner or a right taken away
 *      refuses the fire, and the refusal is recorded with its reason.
 *   4. Complete the entry (published, skipped, buffered, refused or failed), then advance the
 *      schedule: its next fire is computed from this fire, and written only if the schedule still
 *      names this fire as its next (compare-and-set), so it advances once.
 *
 * A burst (at least EARLY_CLAIM_MIN fires due at the same moment) is claimed ahead of its time,
 * within LOOKAHEAD_MS, and each fire's history entry is written with its claim, unpublished: no
 * account's history lists, counts or reads it (see task-log.ts). When its time comes only the
 * publishing is left: the owners are read again (a fire an owner may no longer run is refused,
 * and a fire of a schedule changed, paused or deleted since its claim is withdrawn, its claim
 * and its entry removed), the claims about to be published are written down as such, one small
 * document per chunk of fires (schedule-store.ts, PublishingDoc), and the messages go to the
 * broker; once they are confirmed, the entries are given to their accounts, then the claims are
 * completed and the schedules advanced. "When its time comes" is a little before it (MAX_LEAD_MS):
 * each message carries the fire's due time as its `eta`, so no worker runs it early, and a
 * schedule changed, paused or deleted after that has its fires not yet due withdrawn by the
 * service (schedule-service.ts, withdrawNotDue): revoked when they may be out (PUBLISH_BOUND_MS),
 * their claims removed either way.
 *
 * A process that dies between the claim and the completion leaves a `claimed` entry behind, and
 * the schedule not advanced, so it stays due. When the lease has run out another process takes the
 * claim over (a compare-and-set on the entry) and finishes it under the same task id. The fire
 * counts as published, and is not published again, when the dead process had its message on the
 * way: its history entry is there and either published (written at the fire, just before its
 * message) or written ahead and its claim written down as being published. Otherwise the dead process never
 * published it (no entry, or one written ahead only, which is removed) and it is published now.
 * A process that dies after the completion but before advancing leaves a completed entry, and the
 * next process to look advances the schedule. No fire is doubled. The one way a fire can be lost
 * is a process dying after writing its fires down as being published and before the broker has
 * their messages (the time one chunk takes to publish): a database and a broker cannot be written
 * in one step, and a fire counted as published when it may not have been is preferred to one run
 * twice. Such fires complete with `recovered` and a reason that says so. What such a process
 * leaves where no process takes it over (its schedule paused, changed or deleted since) is
 * finished by a periodic sweep (see sweep).
 */
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { Logger } from '../../log/logger.js';
import type { Principal } from '../../auth/principal.js';
import { canRunTask, canSchedule } from '../../auth/permissions.js';
import type { QueueService, SubmissionRequest, SubmittedTask } from '../api/queue-service.js';
import { defaultQueue } from '../api/task-catalog.js';
import { parseExactJson, type ExactJsonObject, type ExactJsonValue } from '../protocol/exact-numbers.js';
import { submitterAccessOf } from '../protocol/submitter-access.js';
import { READY_STATES } from '../results/states.js';
import { planDue, type DueStep, type MissedRange } from './plan.js';
import { runKey, type RunDoc, type RunKind, type RunState, type ScheduleDoc, type ScheduleStore } from './schedule-store.js';
import { nextFire, type Window } from './timing.js';
import { RunningSince } from './running-since.js';
import { QueueUnavailableError } from '../errors.js';
import { setTimeout as delay } from 'node:timers/promises';

export interface SchedulerOptions {
  store: ScheduleStore;
  queue: QueueService;
  /** The owner as they are now (rights included), or null when the account is inactive or gone. */
  owner(userId: string): Promise<Principal | null>;
  logger: Logger;
  /** How often the due schedules are asked for. */
  tickMs: number;
  /** How long a claim holds before another process may take it over. */
  claimLeaseMs: number;
  /** How late a fire may be and still count as on time (plan.ts). */
  graceMs: number;
}

/** What each dealt-with fire tells its listeners (the metrics). */
export interface FireEvent {
  scheduleId: string;
  kind: RunKind;
  outcome: RunState;
  /** Published fires: how late, in ms. */
  latenessMs: number | null;
  /** Missed fires: how many. */
  count: number;
}

/** What a burst claimed ahead tells its listeners once it is published (the scheduler benchmark). */
export interface BurstEvent {
  fires: number;
  /** Its due time, when its publishing began, and when the broker had confirmed all of it. */
  dueAt: Date;
  beganAt: Date;
  publishedAt: Date;
}

/** Due schedules read per query; more are read at once when a batch came back full. */
const BATCH = 5_000;
/** Schedules that need reads of their own (see isPlain) dealt with side by side in one tick. */
const CONCURRENCY = 64;
/**
 * Fires published together: their history entries in one insert, their messages side by side;
 * the chunks of a burst go side by side too, so one chunk's insert overlaps another's publishing.
 */
const FIRE_CHUNK = 500;
/** Chunks whose history entries are being written at once (the publishing of those written goes on beside them). */
const PUBLISH_LANES = 4;
/** Chunks written or being written whose messages the broker has not all confirmed yet, at most. */
const UNCONFIRMED_CHUNKS = 8;
/** How far ahead a tick looks for a burst of fires due at about the same time. */
const LOOKAHEAD_MS = 15_000;
/**
 * A burst at least this large is claimed ahead of its time (within LOOKAHEAD_MS), so that when
 * its time comes only the publishing is left; smaller ones are claimed when due.
 */
const EARLY_CLAIM_MIN = 200;
/**
 * A burst claimed ahead begins its publishing up to this long before its time, each message
 * carrying that time as its `eta` (workers hold it until then; it cannot run early): the
 * broker's confirms, which bound how fast a burst goes out, are spent before the fire instead
 * of after it. How far ahead a burst begins is what its size takes at the rate the last burst
 * was published (see beginsAt).
 */
const MAX_LEAD_MS = 2_000;
/**
 * How long a scheduler with nothing due waits at most before it looks again. It wakes sooner for
 * the next due time the look-ahead saw in the store (any process's schedules), a burst it
 * claimed, and a schedule created, changed or resumed through this process (wake). What it can
 * miss meanwhile is a schedule created or changed through another process whose own scheduler
 * is off (or that stopped): that one is seen up to this much later.
 */
const IDLE_POLL_MS = 1_000;
/** Fires per second a burst's publishing is taken to go at until one has been measured. */
const FIRST_RATE = 5_000;
/** A burst's publishing is taken to last this much longer than at the last burst's rate: rates vary from burst to burst. */
const LEAD_MARGIN = 1.5;
/** Added to a burst's lead for the reads before its first message (changes since its claim, owners). */
const LEAD_READS_MS = 100;
/** How far back the check for schedules changed since their fires were claimed ahead looks beyond the claim (other machines' clocks). */
const CLOCK_SKEW_MS = 5_000;
/**
 * A fire claimed ahead and due later than this from now, by the clock of a process that has just
 * removed its claim, cannot be on its way to the broker, and never will be: no process begins a
 * burst's publishing before MAX_LEAD_MS ahead of its due time by its own clock (beginsAt), and
 * every fire of a burst has its claim read once more, per chunk, after that and before its
 * message is sent (recordChunk). A process whose clock is at most CLOCK_SKEW_MS ahead that read
 * the claim before its removal was committed read it before the remover took its clock, so the
 * fire was due within MAX_LEAD_MS + CLOCK_SKEW_MS of that clock; any later read sees no claim.
 * ScheduleService.withdrawNotDue revokes only the fires within this bound.
 */
export const PUBLISH_BOUND_MS = MAX_LEAD_MS + CLOCK_SKEW_MS;
/** Fires dealt with for one schedule in one tick before the others get their turn. */
const MAX_STEPS = 20;
/** How often a schedule holding a buffered run looks whether the last run finished. */
const BUFFER_RECHECK_MS = 1_000;
/** How long a fire is retried while the broker cannot be reached (at most half its claim's lease). */
const BROKER_RETRY_FOR_MS = 10_000;
const BROKER_RETRY_EVERY_MS = 500;
const BROKER_NOT_REACHED = Symbol('broker not reached');
/**
 * A break longer than this in the process's run (see running-since.ts) is downtime; shorter ones,
 * and any slowness while it runs, make fires late, never missed.
 */
const STALL_MS = 30_000;
/** A sweep (see sweep) comes about once per claim lease on each process, at least this long apart. */
const SWEEP_MIN_EVERY_MS = 1_000;
/** Leftovers of each kind one sweep deals with at most; more are left to the next. */
const SWEEP_BATCH = 500;
const RECOVERED_REASON = 'its process stopped while publishing it; counted as published, not published again';
/** Queue used when the schedule names none and no live worker tells a default: Celery's. */
const CELERY_DEFAULT_QUEUE = 'celery';

const dueAt = (next: Date | null, jitterSeconds: number): Date | null =>
  next === null ? null : new Date(next.getTime() + Math.floor(Math.random() * jitterSeconds * 1000));

/** When a task fired now expires (the schedule's `expires`), if it does. */
const expiresAt = (s: Pick<ScheduleDoc, 'expires_s'>, from = Date.now()): Date | undefined =>
  s.expires_s === null ? undefined : new Date(from + s.expires_s * 1000);

/**
 * The timing options of a fire's message published now: an `eta` when it goes out ahead of its
 * due time (a burst's lead), and its expiry counted from when it may run.
 */
function timingOf(c: Pick<Claimed, 's' | 'dueTime'>): { expires?: Date; eta?: Date } {
  const now = Date.now();
  const due = c.dueTime.getTime();
  return due > now ? { expires: expiresAt(c.s, due), eta: c.dueTime } : { expires: expiresAt(c.s, now) };
}

export const windowOf = (s: Pick<ScheduleDoc, 'start_time' | 'end_time'>): Window => ({ start: s.start_time, end: s.end_time });

type FireStep = Extract<DueStep, { kind: 'fire' }>;

/** A submission under a task id chosen already (the claim's). */
type NamedSubmission = SubmissionRequest & { options: { taskId: string } };

/** A fire this process claimed and publishes when its time comes. */
interface Claimed {
  s: ScheduleDoc;
  /** The mark that its claim is being published (see PublishingDoc), once written. */
  mark?: string;
  step: FireStep;
  run: RunDoc;
  /** When it is due: its own time plus the schedule's jitter (a catch-up run: its own time). */
  dueTime: Date;
  /** Its submission, when its history entry was written ahead with its claim (unpublished, see task-log.ts). */
  ahead?: NamedSubmission;
}

/** Fires due at the same moment, claimed ahead of it. */
interface Burst {
  at: number;
  claimedAt: Date;
  fires: Claimed[];
}

/** A compare-and-set update of one schedule. */
interface Advance {
  id: string;
  expect: Parameters<ScheduleStore['updateIf']>[1];
  update: Parameters<ScheduleStore['updateIf']>[2];
  /** The schedule's new `due_at` once applied. */
  due: Date | null;
}

/**
 * Whether no process will ever finish the expired claim `run` of the schedule `s` (undefined:
 * deleted): the schedule is gone or paused (resumed, it fires from then on), its next fire has
 * moved past the claim (a change), or the claim is a "run now", which nobody takes over. A
 * buffered run being released is the schedule's own to finish (releaseBuffered).
 */
export function abandoned(run: RunDoc, s: ScheduleDoc | undefined): boolean {
  if (s === undefined) return true;
  if (run._id === s.buffered_run) return false;
  if (s.paused || run.kind === 'manual') return true;
  return s.next_fire_at === null || run.fire_at.getTime() < s.next_fire_at.getTime();
}

/** Why a fire the scheduler will not run may not be run, or null when it may. */
function refusalOf(owner: Principal | null, task: string): string | null {
  if (owner === null) return "the owner's account is inactive or no longer exists";
  if (!canSchedule(owner)) return 'the owner may no longer schedule tasks (cybercom_queue.schedule_tasks)';
  if (!canRunTask(owner, task)) return `the owner may no longer run the task "${task}"`;
  return null;
}

/**
 * Why fires were recorded as missed: they passed while no scheduler ran. A range that began
 * after this process's scheduler started passed while the process itself did not run (stopped,
 * suspended, its event loop held; see running-since.ts).
 */
function missedReason(range: MissedRange, schedulerStartedAt: Date | null): string {
  const count = `${range.atLeast ? 'at least ' : ''}${range.count} fire(s)`;
  if (schedulerStartedAt !== null && range.first.getTime() >= schedulerStartedAt.getTime()) {
    return `${count} passed while this API process was stopped or suspended, older than the catch-up window`;
  }
  return `${count} passed while no scheduler ran, older than the catch-up window`;
}

export class Scheduler {
  /** Names this process in the claims it makes. */
  readonly id = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  private timer: NodeJS.Timeout | undefined;
  /** When the pending tick is to run (none while one runs). */
  private tickAt: number | null = null;
  /** The last tick found nothing due now (see IDLE_POLL_MS). */
  private idle = false;
  /** The soonest due time the last look-ahead saw in the store, if it saw one. */
  private nextDueAt: number | null = null;
  /** The soonest due time a change through this process asked to be woken for since the last tick began. */
  private wakeAt: number | null = null;
  private running: Promise<void> | undefined;
  private closed = false;
  private readonly listeners = new Set<(event: FireEvent) => void>();
  private readonly burstListeners = new Set<(event: BurstEvent) => void>();
  /** When this process's scheduler started. */
  private startedAt: Date | null = null;
  /** Since when it has run without a break: fires due since then that it reached late, it was slow on (plan.ts). */
  private runningSince: RunningSince | null = null;
  /** Bursts claimed ahead of their time, soonest first, and the schedules they hold. */
  private readonly bursts: Burst[] = [];
  private readonly inHand = new Set<string>();
  /** The last schedule (due time, id) looked at ahead: the next look starts after it. */
  private lookedAheadTo: { due_at: Date; _id: string } | null = null;
  /** Schedules whose fire another process claimed, by id: until when its lease holds (ms). */
  private readonly heldElsewhere = new Map<string, number>();
  /** Bursts published whose entries are being completed and schedules advanced. */
  private readonly finishing = new Set<Promise<void>>();
  /** Fires per second the last burst claimed ahead was published at (see beginsAt). */
  private publishRate = FIRST_RATE;
  /** When this process sweeps next (see sweep), and the sweep under way. */
  private nextSweepAt = 0;
  private sweeping: Promise<void> | undefined;

  constructor(private readonly options: SchedulerOptions) {}

  start(): this {
    this.startedAt = new Date();
    this.runningSince = new RunningSince(Math.max(this.options.graceMs, STALL_MS));
    this.schedule(0);
    return this;
  }

  onFire(listener: (event: FireEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  onBurst(listener: (event: BurstEvent) => void): () => void {
    this.burstListeners.add(listener);
    return () => this.burstListeners.delete(listener);
  }

  /**
   * Asks for a tick by `dueAt` (a schedule created, changed or resumed through this process), so
   * that a scheduler idle for up to IDLE_POLL_MS still fires it on time.
   */
  wake(dueAt: Date | null): void {
    if (dueAt === null || this.closed || this.startedAt === null) return;
    const at = dueAt.getTime();
    this.wakeAt = Math.min(this.wakeAt ?? Infinity, at);
    // A tick under way schedules the next one itself, wakeAt included.
    if (this.tickAt !== null && at < this.tickAt) {
      clearTimeout(this.timer);
      this.schedule(Math.max(0, at - Date.now()));
    }
  }

  private schedule(delayMs: number): void {
    if (this.closed) return;
    this.tickAt = Date.now() + delayMs;
    this.timer = setTimeout(() => {
      this.tickAt = null;
      this.wakeAt = null;
      this.running = this.tick().then((full) => {
        this.running = undefined;
        // The next tick comes at the tick interval (with nothing due, at IDLE_POLL_MS), or sooner
        // for the next due time known: a burst claimed ahead to begin, a schedule the look-ahead
        // saw, a change through this process.
        const now = Date.now();
        const burst = this.bursts[0];
        const soonest = Math.min(
          burst === undefined ? Infinity : this.beginsAt(burst),
          this.nextDueAt ?? Infinity,
          this.wakeAt ?? Infinity,
        );
        const poll = this.idle ? Math.max(this.options.tickMs, IDLE_POLL_MS) : this.options.tickMs;
        this.schedule(full ? 0 : Math.min(poll, Math.max(0, soonest - now)));
      });
    }, delayMs);
  }

  /**
   * One pass: publishes the bursts claimed ahead whose time has come, deals with the schedules
   * due now, then claims ahead a burst coming within LOOKAHEAD_MS. True when there may be more
   * due right now.
   */
  async tick(): Promise<boolean> {
    const { store } = this.options;
    try {
      // A burst's publishing is awaited; its completions and advances go on beside the next ticks (fireHeld).
      while (this.bursts.length > 0 && this.beginsAt(this.bursts[0]!) <= Date.now() && !this.closed)
        await this.fireBurst(this.bursts.shift()!);
      this.sweepNow();
      if (this.idle && this.nextDueAt === null && this.bursts.length === 0) {
        // Nothing was due, nor within the look-ahead: one query tells whether anything is now.
        const soonest = await store.soonestDue();
        if (soonest === null || soonest.getTime() > Date.now() + LOOKAHEAD_MS) return false;
      }
      const now = new Date();
      this.forgetHeld(now.getTime());
      const rows = await store.dueIds(null, now, BATCH);
      this.idle = rows.length === 0;
      this.nextDueAt = null;
      const ids = rows.filter((r) => this.free(r._id, now.getTime())).map((r) => r._id);
      if (ids.length > 0) await this.dealWith(await store.getMany(ids), now);
      if (rows.length === BATCH && ids.length > 0) return true;
      if (!this.closed) await this.claimAhead(new Date(), now);
    } catch (err) {
      this.options.logger.warn({ err }, 'scheduler: could not deal with the due schedules');
    }
    return false;
  }

  /** Starts a sweep beside the tick when one is due on this process (at a random phase, so processes spread theirs). */
  private sweepNow(): void {
    const now = Date.now();
    if (this.sweeping !== undefined || now < this.nextSweepAt || this.closed) return;
    this.nextSweepAt = now + Math.max(SWEEP_MIN_EVERY_MS, this.options.claimLeaseMs) * (0.5 + Math.random());
    this.sweeping = this.sweep(new Date(now))
      .catch((err: unknown) => this.options.logger.warn({ err }, 'scheduler: could not sweep what stopped processes left'))
      .finally(() => {
        this.sweeping = undefined;
      });
  }

  /**
   * Removes what a process that died between writing a fire's records and publishing it leaves
   * behind where no process will finish it (a schedule paused, changed or deleted since): claims,
   * history entries written ahead (seen by nobody, for good) and publishing marks. Any process
   * does it, a batch at a time; every step is conditional, so processes sweeping side by side, or
   * one taking a claim over meanwhile, change nothing twice. Only records older than a claim's
   * expiry and a lease more are looked at: no live process publishes them any more (a process
   * publishes a claim within its lease, see publish, and re-reads it first, see PUBLISH_BOUND_MS).
   *
   *   - An expired claim no process will finish (see abandoned): when its fire may have been
   *     published (its entry published, or written ahead and marked as being published) it is
   *     counted as published, as a claim taken over would be, and its entry given to the owner
   *     (of a deleted schedule, the claim is removed); otherwise it is removed, then its entry.
   *   - An entry written ahead with no claim open for it is removed (given to the owner instead
   *     when its fire was completed as published).
   *   - A mark none of whose claims is still open is removed.
   */
  async sweep(now = new Date()): Promise<void> {
    const { store, queue } = this.options;
    const lease = this.options.claimLeaseMs;
    const expired = await store.expiredClaims(new Date(now.getTime() - lease), SWEEP_BATCH);
    if (expired.length > 0) {
      const schedules = new Map((await store.getMany([...new Set(expired.map((r) => r.schedule_id))])).map((s) => [s._id, s]));
      const left = expired.filter((r) => abandoned(r, schedules.get(r.schedule_id)));
      const marked = await store.markedAmong(left.map((r) => r._id));
      for (const run of left) await this.sweepClaim(run, schedules.has(run.schedule_id), marked.has(run._id));
    }
    // An entry is written ahead up to LOOKAHEAD_MS before its fire, whose claim's lease runs a lease past it.
    const entries = await queue.log.unpublishedBefore(new Date(now.getTime() - LOOKAHEAD_MS - 2 * lease), SWEEP_BATCH);
    if (entries.length > 0) {
      const scheduleIds = entries.flatMap((e) => e.tags.filter((t) => t.startsWith('schedule:')).map((t) => t.slice('schedule:'.length)));
      const runs = await store.runsOfTasks(
        [...new Set(scheduleIds)],
        entries.map((e) => e._id),
      );
      const byTask = new Map(runs.map((r) => [r.task_id, r]));
      const open = entries.filter((e) => byTask.get(e._id)?.state === 'claimed');
      const published = entries.filter((e) => byTask.get(e._id)?.state === 'published');
      await queue.log.reveal(published.map((e) => ({ taskId: e._id, userId: e.unpublished_for! })));
      await queue.log.dropUnpublished(entries.filter((e) => !open.includes(e) && !published.includes(e)).map((e) => e._id));
    }
    const marks = await store.marksBefore(new Date(now.getTime() - lease), SWEEP_BATCH);
    if (marks.length > 0) {
      const stillOpen = await store.openAmong(marks.flatMap((m) => m.runs));
      await store.publishedAll(marks.filter((m) => !m.runs.some((id) => stillOpen.has(id))).map((m) => m._id));
    }
  }

  /** Finishes one abandoned claim (see sweep). */
  private async sweepClaim(run: RunDoc, scheduleExists: boolean, marked: boolean): Promise<void> {
    const { store, queue } = this.options;
    const entry = run.task_id === null ? null : await queue.log.getWritten(run.task_id);
    const hidden = entry?.unpublished_for;
    if (entry !== null && (hidden === undefined || marked)) {
      // The entry first: a claim left open by a process dying here is swept again, and the entry stays given.
      if (hidden !== undefined) await queue.log.reveal([{ taskId: entry._id, userId: hidden }]);
      const fields: Partial<RunDoc> = { state: 'published', published_at: new Date(), recovered: true, reason: RECOVERED_REASON };
      await store.settleLeftClaim(run._id, run.lease_until, scheduleExists ? fields : null);
      return;
    }
    // The claim first: an entry left by a process dying here has no claim, and the next sweep removes it.
    if ((await store.settleLeftClaim(run._id, run.lease_until, null)) && entry !== null) await queue.log.dropUnpublished([entry._id]);
  }

  /** Whether this process may look at the schedule now: not in a burst it holds, not held by another's live claim. */
  private free(id: string, now: number): boolean {
    return !this.inHand.has(id) && (this.heldElsewhere.get(id) ?? 0) <= now;
  }

  private forgetHeld(now: number): void {
    for (const [id, until] of this.heldElsewhere) if (until <= now) this.heldElsewhere.delete(id);
  }

  /**
   * Whether the schedule's due fire can go with the others in bulk: one that needs reads of its
   * own (a buffered run, an overlap policy with a last run to look at) goes alone (`handle`).
   */
  private isPlain(s: ScheduleDoc, until: number): boolean {
    return (
      s.buffered_run === null &&
      s.next_fire_at !== null &&
      s.next_fire_at.getTime() <= until &&
      (s.overlap === 'allow' || s.last_task_id === null)
    );
  }

  /** Deals with schedules due now: the plain ones claimed and published in bulk, the others one by one. */
  private async dealWith(docs: ScheduleDoc[], now: Date): Promise<void> {
    const plain: ScheduleDoc[] = [];
    const alone: ScheduleDoc[] = [];
    for (const s of docs) {
      if (s.due_at === null || s.due_at.getTime() > now.getTime()) continue;
      (this.isPlain(s, now.getTime()) ? plain : alone).push(s);
    }
    const { claimed, others } = await this.claimFires(plain, now);
    for (const c of claimed) this.inHand.add(c.s._id);
    await Promise.all([this.fireHeld(claimed, null), this.handleEach([...alone, ...others])]);
  }

  /** Deals with schedules one at a time each, CONCURRENCY side by side. */
  private async handleEach(due: ScheduleDoc[]): Promise<void> {
    // Processes reading the same batch start at different places, so they rarely meet on a fire.
    const offset = due.length === 0 ? 0 : Math.floor(Math.random() * due.length);
    const order = [...due.slice(offset), ...due.slice(0, offset)];
    let next = 0;
    const lane = async (): Promise<void> => {
      while (next < order.length && !this.closed) {
        const s = order[next++]!;
        await this.handle(s).catch((err: unknown) =>
          this.options.logger.error({ err, schedule: s._id }, 'scheduler: could not deal with a due schedule'),
        );
      }
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, order.length) }, lane));
  }

  /**
   * Claims ahead the fires coming within LOOKAHEAD_MS when there are at least EARLY_CLAIM_MIN of
   * them not claimed yet: their claims are written now, so that at their time only their
   * publishing is left. Each claim's lease runs from its fire's time.
   */
  private async claimAhead(now: Date, tickNow: Date): Promise<void> {
    const { store } = this.options;
    const horizon = new Date(now.getTime() + LOOKAHEAD_MS);
    // Read from the tick's own time, so that a schedule that came due since (after the tick's
    // query for the due ones) is seen as the next due time, not passed by until the idle poll.
    let after =
      this.lookedAheadTo !== null && this.lookedAheadTo.due_at.getTime() > now.getTime()
        ? this.lookedAheadTo
        : { due_at: tickNow, _id: '' };
    for (let page = 0; !this.closed; page++) {
      const rows = await store.dueIdsAfter(after, horizon, BATCH);
      // Read from now on, the first row is the soonest due time in the store (the next tick's).
      if (page === 0 && after.due_at === tickNow && rows.length > 0) this.nextDueAt = rows[0]!.due_at.getTime();
      if (page === 0 && rows.length < EARLY_CLAIM_MIN) return;
      if (rows.length === 0) return;
      after = rows.at(-1)!;
      this.lookedAheadTo = after;
      const ids = rows.filter((r) => this.free(r._id, now.getTime())).map((r) => r._id);
      const docs = (await store.getMany(ids)).filter(
        (s) =>
          s.due_at !== null &&
          s.due_at.getTime() > now.getTime() &&
          s.due_at.getTime() <= horizon.getTime() &&
          this.isPlain(s, horizon.getTime()),
      );
      const { claimed } = await this.claimFires(docs, now);
      await this.recordAhead(claimed);
      const byTime = new Map<number, Claimed[]>();
      for (const c of claimed) {
        this.inHand.add(c.s._id);
        const at = c.dueTime.getTime();
        const same = byTime.get(at);
        if (same === undefined) byTime.set(at, [c]);
        else same.push(c);
      }
      for (const [at, fires] of byTime) {
        const burst = this.bursts.find((b) => b.at === at);
        if (burst === undefined) this.bursts.push({ at, claimedAt: now, fires });
        else burst.fires.push(...fires);
      }
      this.bursts.sort((a, b) => a.at - b.at);
      if (rows.length < BATCH) return;
    }
  }

  /**
   * Writes the history entries of fires claimed ahead, unpublished (see task-log.ts), a chunk at
   * a time, so that at their time only the publishing is left; each fire written is given its
   * submission (`ahead`). A fire whose owner may not run it now gets none (it is refused at its
   * time, when the owner is read again), nor does one whose entry could not be written: it is
   * written at its time, as a fire claimed then.
   */
  private async recordAhead(claimed: Claimed[]): Promise<void> {
    const { queue } = this.options;
    const owners = await this.ownersOf(claimed);
    const queues = await this.queuesOf(claimed);
    const ready = claimed.filter((c) => refusalOf(owners.get(c.s.owner_id) ?? null, c.s.task) === null);
    for (let i = 0; i < ready.length && !this.closed; i += FIRE_CHUNK) {
      const chunk = ready.slice(i, i + FIRE_CHUNK);
      const requests = chunk.map((c) => this.submissionOf(c, owners.get(c.s.owner_id)!, queues));
      const written = await queue.recordAhead(requests);
      chunk.forEach((c, n) => {
        if (written[n] === null) c.ahead = requests[n];
      });
      // An insert that failed as a whole (a deadline) may have written some entries all the same.
      const failed = requests.filter((_, n) => written[n] !== null).map((r) => r.options.taskId);
      await queue.log.dropUnpublished(failed).catch((err: unknown) => {
        this.options.logger.warn({ err }, 'scheduler: could not remove history entries it could not write ahead');
      });
    }
  }

  /** The owners of the fires' schedules as they are now (rights included), each read once. */
  private async ownersOf(fires: readonly Claimed[]): Promise<Map<string, Principal | null>> {
    const owners = new Map<string, Principal | null>();
    await Promise.all(
      [...new Set(fires.map((c) => c.s.owner_id))].map(async (id) => {
        owners.set(id, await this.options.owner(id));
      }),
    );
    return owners;
  }

  /** The default queue of each task the fires' schedules name no queue for. */
  private async queuesOf(fires: readonly Claimed[]): Promise<Map<string, string>> {
    const queues = new Map<string, string>();
    await Promise.all(
      [...new Set(fires.filter((c) => c.s.queue === null).map((c) => c.s.task))].map(async (task) => {
        queues.set(task, await this.defaultQueueOf(task));
      }),
    );
    return queues;
  }

  /**
   * When a burst's publishing begins: ahead of its time by what its size takes at the rate the
   * last burst went out (with LEAD_MARGIN), plus its reads, at most MAX_LEAD_MS (see MAX_LEAD_MS).
   */
  private beginsAt(burst: Burst): number {
    const leadMs = LEAD_READS_MS + ((LEAD_MARGIN * burst.fires.length) / this.publishRate) * 1000;
    return burst.at - Math.min(MAX_LEAD_MS, leadMs);
  }

  private async fireBurst(burst: Burst): Promise<void> {
    const began = Date.now();
    await this.fireHeld(burst.fires, burst.claimedAt);
    const published = Date.now();
    const seconds = (published - began) / 1000;
    const event = { fires: burst.fires.length, dueAt: new Date(burst.at), beganAt: new Date(began), publishedAt: new Date(published) };
    for (const listener of this.burstListeners) listener(event);
    // A small burst measures mostly its reads, not the broker's rate.
    if (burst.fires.length >= EARLY_CLAIM_MIN && seconds > 0) this.publishRate = burst.fires.length / seconds;
  }

  /**
   * Publishes fires whose schedules this process holds in hand (see fire); resolves once they are
   * published. Their completions and advances go on beside the next ticks, and the schedules stay
   * in hand until those are done, so that no tick reads them as still due meanwhile: a tick that
   * waited for them would hold back the next burst's publishing and its claims ahead.
   */
  private async fireHeld(fires: Claimed[], claimedAt: Date | null): Promise<void> {
    const release = () => {
      for (const c of fires) this.inHand.delete(c.s._id);
    };
    try {
      const { settled } = await this.fire(fires, claimedAt);
      const finishing = settled.then(release, (err: unknown) => {
        release();
        this.options.logger.warn({ err }, 'scheduler: could not complete fires it published');
      });
      this.finishing.add(finishing);
      void finishing.finally(() => this.finishing.delete(finishing));
    } catch (err) {
      release();
      throw err;
    }
  }

  /**
   * Plans and claims the due fire of each schedule, all with one insert. Resolves with the fires
   * this process won, and the schedules to deal with one by one: those with a claim left open by
   * another process (late, or whose lease ran out), which may have to be taken over.
   */
  private async claimFires(docs: ScheduleDoc[], now: Date): Promise<{ claimed: Claimed[]; others: ScheduleDoc[] }> {
    const { store } = this.options;
    if (docs.length === 0) return { claimed: [], others: [] };
    // A late fire may have a claim left open by a process that died (see leftClaim): one query for all of them.
    const lateEdge = now.getTime() - this.options.graceMs;
    const late = new Map(docs.filter((s) => s.next_fire_at!.getTime() < lateEdge).map((s) => [s._id, s.next_fire_at!]));
    const open = await store.withOpenClaims(late);
    const others = docs.filter((s) => open.has(s._id));
    const missedRuns: { s: ScheduleDoc; run: RunDoc }[] = [];
    const fires: Claimed[] = [];
    const advances: Advance[] = [];
    const runningSince = this.runningSince?.get() ?? null;
    for (const s of docs) {
      if (open.has(s._id)) continue;
      const step = planDue(s.timing, windowOf(s), s.next_fire_at!, now, {
        graceMs: this.options.graceMs,
        catchUpWindowMs: s.catch_up_window_s * 1000,
        runningSince,
      });
      if (step.missed !== null) missedRuns.push({ s, run: this.missedRun(s._id, step.missed, now) });
      if (step.kind === 'missed') {
        advances.push(this.advanceOf(s, step, null, step.missed?.count ?? 0));
        continue;
      }
      const dueTime = step.catchUp ? step.fire : (s.due_at ?? step.fire);
      const run: RunDoc = {
        ...this.newRun(s._id, runKey(s._id, step.fire), step.catchUp ? 'catch_up' : 'scheduled', step.fire, now),
        count: step.covers,
        lease_until: new Date(Math.max(now.getTime(), dueTime.getTime()) + this.options.claimLeaseMs),
        due_at: dueTime,
      };
      fires.push({ s, step, run, dueTime });
    }
    const won = await store.claimMany([...missedRuns.map((m) => m.run), ...fires.map((f) => f.run)]);
    missedRuns.forEach((m, i) => {
      if (won[i]) this.emit({ scheduleId: m.s._id, kind: 'missed', outcome: 'missed', latenessMs: null, count: m.run.count });
    });
    const claimed: Claimed[] = [];
    const lost: Claimed[] = [];
    fires.forEach((f, i) => (won[missedRuns.length + i] ? claimed : lost).push(f));
    const existing = new Map((await store.getRuns(lost.map((f) => f.run._id))).map((r) => [r._id, r]));
    for (const f of lost) {
      const run = existing.get(f.run._id);
      // Not there: the insert was refused for another reason; the schedule is looked at again next tick.
      if (run === undefined) continue;
      if (run.state !== 'claimed') advances.push(this.advanceOf(f.s, f.step, run, f.step.missed?.count ?? 0));
      else if (run.lease_until.getTime() > now.getTime()) this.heldElsewhere.set(f.s._id, run.lease_until.getTime());
      else others.push(f.s);
    }
    if (advances.length > 0) await store.updateManyIf(advances);
    return { claimed, others };
  }

  private missedRun(scheduleId: string, missed: MissedRange, now: Date): RunDoc {
    return {
      ...this.newRun(scheduleId, `${scheduleId}@missed@${missed.first.toISOString()}`, 'missed', missed.first, now),
      state: 'missed',
      count: missed.count,
      reason: missedReason(missed, this.startedAt),
    };
  }

  /**
   * Publishes fires this process claimed, in chunks side by side, reading each owner once (their
   * rights are checked now, at the fire). Resolves once all are published, with `settled`: their
   * entries completed and their schedules advanced, in bulk, after the publishing. `claimedAt`:
   * when they were claimed ahead (null: just now); a schedule changed, paused or resumed through
   * the service since then is not fired, and its claim is withdrawn (the schedule's new due time
   * is looked at as any other).
   */
  private async fire(claimed: Claimed[], claimedAt: Date | null): Promise<{ settled: Promise<void> }> {
    if (claimed.length === 0) return { settled: Promise.resolve() };
    const { store } = this.options;
    let fires = claimed;
    if (claimedAt !== null) {
      const changed = await store.changedSince(new Date(claimedAt.getTime() - CLOCK_SKEW_MS));
      const isChanged = (c: Claimed) => changed.has(c.s._id) && changed.get(c.s._id) !== c.s.updated_at.getTime();
      const withdrawn = fires.filter(isChanged);
      // The entries before the claims: a claim left (this process dying between the two) is
      // finished by another process as any claim whose process died, an entry left would not be.
      await this.options.queue.log.dropUnpublished(withdrawn.filter((c) => c.ahead !== undefined).map((c) => c.run.task_id!));
      await store.releaseClaims(
        withdrawn.map((c) => c.run._id),
        this.id,
      );
      fires = fires.filter((c) => !isChanged(c));
    }
    const [owners, queues] = await Promise.all([this.ownersOf(fires), this.queuesOf(fires)]);
    const chunks: Claimed[][] = [];
    for (let i = 0; i < fires.length; i += FIRE_CHUNK) chunks.push(fires.slice(i, i + FIRE_CHUNK));
    // Every chunk is published before any is completed: the completions and advances would
    // otherwise hold the database while later chunks wait to be published. A lane goes on to
    // the next chunk's history entries as soon as this one's are written, while the broker
    // confirms this one's messages: the database and the broker work side by side, instead of
    // each waiting for the other in turn.
    // The chunks written but not yet confirmed are bounded, so that a slow broker holds the lanes
    // back instead of collecting more messages than it confirms within the publisher's timeout.
    const published: Promise<Partial<RunDoc>[]>[] = new Array<Promise<Partial<RunDoc>[]>>(chunks.length);
    const unconfirmed = new Set<Promise<void>>();
    let next = 0;
    const lane = async (): Promise<void> => {
      while (next < chunks.length) {
        while (unconfirmed.size >= UNCONFIRMED_CHUNKS) await Promise.race(unconfirmed);
        if (next >= chunks.length) return;
        const n = next++;
        let release = (): void => undefined;
        const slot = new Promise<void>((resolve) => {
          release = () => {
            unconfirmed.delete(slot);
            resolve();
          };
        });
        unconfirmed.add(slot);
        try {
          const chunk = (await this.recordChunk(chunks[n]!, owners, queues, claimedAt !== null)).published;
          published[n] = chunk;
          chunk.then(release, release);
        } catch (err) {
          release();
          throw err;
        }
      }
    };
    try {
      await Promise.all(Array.from({ length: Math.min(PUBLISH_LANES, chunks.length) }, lane));
    } finally {
      // Those under way are waited for either way: none is left publishing unawaited.
      await Promise.allSettled(published);
    }
    const fields = (await Promise.all(published)).flat();
    // All completions together, then all advances: two rounds of bulk writes for the whole
    // burst, so its schedules are free for the look ahead at their next fire as soon as can be.
    const settled = this.settle(chunks.flat(), fields);
    return { settled };
  }

  /**
   * Writes the history entries of a chunk of fires; resolves once they are written, with their
   * publishing under way (`published`: the fields that complete each one's entry). `claimedAhead`:
   * the chunk is of a burst claimed ahead, whose every claim is read once more before its message
   * goes out (see PUBLISH_BOUND_MS).
   */
  private async recordChunk(
    chunk: Claimed[],
    owners: Map<string, Principal | null>,
    queues: Map<string, string>,
    claimedAhead: boolean,
  ): Promise<{ published: Promise<Partial<RunDoc>[]> }> {
    const { queue, store } = this.options;
    const fields: Partial<RunDoc>[] = new Array<Partial<RunDoc>>(chunk.length);
    let fresh: number[] = [];
    const ahead: number[] = [];
    chunk.forEach((c, i) => {
      const refusal = refusalOf(owners.get(c.s.owner_id) ?? null, c.s.task);
      if (refusal !== null) fields[i] = { state: 'refused', reason: refusal };
      else (c.ahead === undefined ? fresh : ahead).push(i);
    });
    if (claimedAhead && fresh.length > 0) {
      // Fires of a burst whose entries could not be written ahead: their claims are read before
      // their entries are written (a schedule changed, paused or deleted has its claims removed).
      const held = await store.stillClaimed(
        fresh.map((i) => chunk[i]!.run._id),
        this.id,
      );
      fresh = fresh.filter((i) => {
        if (held.has(chunk[i]!.run._id)) return true;
        fields[i] = { state: 'failed', reason: 'its claim was no longer held by this process' };
        return false;
      });
    }
    // The fires whose entries were written ahead: their claims written down as being published
    // (see the header) while they are read once more (a schedule deleted took its claim with it),
    // beside the entries of the others being written now.
    const aheadIds = ahead.map((i) => chunk[i]!.run._id);
    const [publishFresh, mark, mine] = await Promise.all([
      fresh.length === 0
        ? async () => []
        : queue.recordMany(fresh.map((i) => this.submissionOf(chunk[i]!, owners.get(chunk[i]!.s.owner_id)!, queues))),
      ahead.length === 0 ? undefined : store.markPublishing(aheadIds, this.id),
      ahead.length === 0 ? new Set<string>() : store.stillClaimed(aheadIds, this.id),
    ]);
    const aheadMine = ahead.filter((i) => {
      chunk[i]!.mark = mark;
      if (mine.has(chunk[i]!.run._id)) return true;
      fields[i] = { state: 'failed', reason: 'its claim was no longer held by this process' };
      return false;
    });
    if (aheadMine.length < ahead.length) await this.dropClaimsGone(ahead.filter((i) => !mine.has(chunk[i]!.run._id)).map((i) => chunk[i]!));
    const publish = async (): Promise<(SubmittedTask | Error)[]> => {
      const [freshOutcomes, aheadOutcomes] = await Promise.all([
        publishFresh(),
        queue.publishRecorded(aheadMine.map((i) => this.aheadSubmission(chunk[i]!, owners.get(chunk[i]!.s.owner_id)!))),
      ]);
      return [...freshOutcomes, ...aheadOutcomes];
    };
    return { published: this.publishRecorded(chunk, owners, fields, [...fresh, ...aheadMine], publish) };
  }

  /**
   * Of fires written ahead whose claims were not this process's any more when their time came:
   * the entries of those whose claims are gone (their schedules deleted, with their run logs) are
   * removed; one taken over by another process (its lease ran out) is that one's to finish.
   */
  private async dropClaimsGone(fires: Claimed[]): Promise<void> {
    const left = new Set((await this.options.store.getRuns(fires.map((c) => c.run._id))).map((r) => r._id));
    await this.options.queue.log.dropUnpublished(fires.filter((c) => !left.has(c.run._id)).map((c) => c.run.task_id!));
  }

  /** The submission of a fire whose entry was written ahead, as its owner is now (their rights travel with the message). */
  private aheadSubmission(c: Claimed, owner: Principal): NamedSubmission {
    const written = c.ahead!;
    return {
      ...written,
      submitter: submitterAccessOf({ username: owner.username!, isSuperuser: owner.isSuperuser, permissions: owner.permissions }),
      options: { taskId: written.options.taskId, ...timingOf(c) },
    };
  }

  /** Publishes a chunk's fires whose history entries are written; resolves with the fields that complete each one's entry. */
  private async publishRecorded(
    chunk: Claimed[],
    owners: Map<string, Principal | null>,
    fields: Partial<RunDoc>[],
    toSubmit: number[],
    publish: () => Promise<(SubmittedTask | Error)[]>,
  ): Promise<Partial<RunDoc>[]> {
    const outcomes = await publish();
    const publishedAt = new Date();
    const retry: number[] = [];
    toSubmit.forEach((i, n) => {
      const outcome = outcomes[n];
      const c = chunk[i]!;
      if (!(outcome instanceof Error)) {
        fields[i] = {
          state: 'published',
          published_at: publishedAt,
          lateness_ms: Math.max(0, publishedAt.getTime() - c.dueTime.getTime()),
        };
      } else if (outcome instanceof QueueUnavailableError && outcome.detail?.task_id === undefined) {
        retry.push(i);
      } else {
        this.options.logger.warn({ err: outcome, schedule: c.s._id }, 'scheduler: could not publish a fire');
        fields[i] = { state: 'failed', reason: outcome.message };
      }
    });
    // The broker was not reached: each is tried again while its claim holds (see publish).
    await Promise.all(
      retry.map(async (i) => {
        const c = chunk[i]!;
        fields[i] = await this.publish(c.s, owners.get(c.s.owner_id)!, c.run, c.dueTime);
      }),
    );
    return fields;
  }

  /** Completes the entries of published fires and advances their schedules. */
  private async settle(chunk: Claimed[], fields: Partial<RunDoc>[]): Promise<void> {
    const { store, queue } = this.options;
    // Entries written ahead first: given to their accounts (published, or perhaps: the broker did
    // not confirm), or removed (refused). A claim completed while its entry stayed unpublished
    // would leave the entry so for good.
    const ahead = chunk.map((c, i) => ({ c, state: fields[i]!.state })).filter(({ c }) => c.ahead !== undefined);
    await queue.log.dropUnpublished(ahead.filter(({ state }) => state === 'refused').map(({ c }) => c.run.task_id!));
    await queue.log.reveal(
      ahead.filter(({ state }) => state !== 'refused').map(({ c }) => ({ taskId: c.run.task_id!, userId: c.s.owner_id })),
    );
    const completed = await store.completeMany(chunk.map((c, i) => ({ id: c.run._id, by: this.id, fields: fields[i]! })));
    const advances: Advance[] = [];
    chunk.forEach((c, i) => {
      if (!completed[i]) return;
      const done = { ...c.run, ...fields[i] };
      this.emit({ scheduleId: c.s._id, kind: c.run.kind, outcome: done.state, latenessMs: done.lateness_ms, count: 1 });
      advances.push(this.advanceOf(c.s, c.step, done, c.step.missed?.count ?? 0));
    });
    await store.publishedAll([...new Set(chunk.map((c) => c.mark).filter((m) => m !== undefined))]);
    if (advances.length > 0) await store.updateManyIf(advances);
  }

  private submissionOf(c: Claimed, owner: Principal, queues: Map<string, string>): NamedSubmission {
    const { s, run } = c;
    const queueName = s.queue ?? queues.get(s.task) ?? CELERY_DEFAULT_QUEUE;
    return {
      submitter: submitterAccessOf({ username: owner.username!, isSuperuser: owner.isSuperuser, permissions: owner.permissions }),
      userId: s.owner_id,
      taskName: s.task,
      submission: {
        args: parseExactJson(s.args_json) as ExactJsonValue[],
        kwargs: parseExactJson(s.kwargs_json) as ExactJsonObject,
        tags: [`schedule:${s._id}`],
        queue: queueName,
      },
      queue: queueName,
      options: { taskId: run.task_id!, ...timingOf(c) },
    };
  }

  /** Deals with what is due of one schedule, one fire at a time. */
  private async handle(first: ScheduleDoc): Promise<void> {
    let s: ScheduleDoc | null = first;
    for (let step = 0; step < MAX_STEPS && s !== null && !this.closed; step++) {
      const now = new Date();
      if (s.due_at === null || s.due_at.getTime() > now.getTime()) return;
      if (s.buffered_run !== null) await this.releaseBuffered(s, now);
      if (s.next_fire_at === null || s.next_fire_at.getTime() > now.getTime()) {
        // Only a buffered run's re-check was due.
        const due = s.buffered_run === null ? dueAt(s.next_fire_at, 0) : this.recheck(s.next_fire_at, now);
        await this.options.store.updateIf(s._id, { due_at: s.due_at }, { $set: { due_at: due } });
        return;
      }
      const due = await this.fireDue(s, now);
      // Read again only when another fire is due already (a burst after downtime, a busy tick).
      if (due === undefined || due === null || due.getTime() > Date.now()) return;
      s = await this.options.store.get(s._id);
    }
  }

  private recheck(next: Date | null, now: Date): Date {
    const soon = now.getTime() + BUFFER_RECHECK_MS;
    return new Date(next === null ? soon : Math.min(soon, next.getTime()));
  }

  /**
   * Deals with the schedule's next fire. Resolves with the schedule's new `due_at` once it was
   * advanced (null: nothing more is due), undefined when it was left to another process.
   */
  private async fireDue(s: ScheduleDoc, now: Date): Promise<Date | null | undefined> {
    const { store } = this.options;
    const step =
      (await this.leftClaim(s, now)) ??
      planDue(s.timing, windowOf(s), s.next_fire_at!, now, {
        graceMs: this.options.graceMs,
        catchUpWindowMs: s.catch_up_window_s * 1000,
        runningSince: this.runningSince?.get() ?? null,
      });
    if (step.missed !== null) {
      const recorded = await store.recordMissed(this.missedRun(s._id, step.missed, now));
      if (recorded) this.emit({ scheduleId: s._id, kind: 'missed', outcome: 'missed', latenessMs: null, count: step.missed.count });
    }
    if (step.kind === 'missed') return this.advance(s, step, null, step.missed?.count ?? 0);

    const runId = runKey(s._id, step.fire);
    let run: RunDoc = {
      ...this.newRun(s._id, runId, step.catchUp ? 'catch_up' : 'scheduled', step.fire, now),
      count: step.covers,
    };
    if (!(await store.claim(run))) {
      const existing = await store.getRun(runId);
      if (existing === null) return undefined;
      if (existing.state !== 'claimed') return this.advance(s, step, existing, step.missed?.count ?? 0);
      // Another process holds it; once its lease ran out, it died holding it, and this one finishes it.
      if (existing.lease_until.getTime() > now.getTime()) return undefined;
      if (!(await store.takeOver(runId, this.id, now, new Date(now.getTime() + this.options.claimLeaseMs)))) return undefined;
      this.options.logger.warn({ schedule: s._id, run: runId, from: existing.claimed_by }, 'scheduler: took over a claim its process left');
      run = { ...existing, claimed_by: this.id, recovered: true };
    }
    const dueTime = step.catchUp ? step.fire : (s.due_at ?? step.fire);
    const fields = await this.execute(s, run, dueTime, true);
    if (!(await store.complete(runId, this.id, fields))) return undefined;
    const done = { ...run, ...fields };
    this.emit({ scheduleId: s._id, kind: run.kind, outcome: done.state, latenessMs: done.lateness_ms, count: 1 });
    return this.advance(s, step, done, step.missed?.count ?? 0);
  }

  /**
   * The fire a claim still open stands for, when the schedule's next fire is late: a claim is a
   * decision to fire, so it is finished whatever the time. Planned again, the fire would count as
   * late by the time a dead claimant's lease ran out, and be caught up under another key or
   * recorded as missed, leaving the claim never published.
   */
  private async leftClaim(s: ScheduleDoc, now: Date): Promise<DueStep | null> {
    const due = s.next_fire_at!;
    if (due.getTime() >= now.getTime() - this.options.graceMs) return null;
    const left = await this.options.store.openClaim(s._id, due);
    if (left === null) return null;
    return {
      kind: 'fire',
      fire: left.fire_at,
      catchUp: left.kind === 'catch_up',
      covers: left.count,
      missed: null,
      next: nextFire(s.timing, left.fire_at, windowOf(s)),
    };
  }

  private newRun(scheduleId: string, id: string, kind: RunKind, fireAt: Date, now: Date): RunDoc {
    return {
      _id: id,
      schedule_id: scheduleId,
      kind,
      fire_at: fireAt,
      state: 'claimed',
      task_id: kind === 'missed' ? null : randomUUID(),
      claimed_by: this.id,
      claimed_at: now,
      lease_until: new Date(now.getTime() + this.options.claimLeaseMs),
      published_at: null,
      lateness_ms: null,
      reason: null,
      count: 1,
      recovered: false,
    };
  }

  /**
   * Decides and publishes a claimed fire; resolves with the fields that complete its entry.
   * `overlap`: whether the schedule's overlap policy applies ("run now" ignores it).
   */
  private async execute(s: ScheduleDoc, run: RunDoc, dueTime: Date, overlap: boolean): Promise<Partial<RunDoc>> {
    const { queue } = this.options;
    if (run.recovered) {
      // Whether the process that died had the message on its way (see the header).
      const entry = await queue.log.getWritten(run.task_id!);
      const unpublishedFor = entry?.unpublished_for;
      if (entry !== null && (unpublishedFor === undefined || (await this.options.store.markedPublishing(run._id)))) {
        if (unpublishedFor !== undefined) await queue.log.reveal([{ taskId: entry._id, userId: unpublishedFor }]);
        return {
          state: 'published',
          published_at: new Date(),
          lateness_ms: null,
          reason: RECOVERED_REASON,
        };
      }
      // Written ahead, never handed to the broker: published now (or refused) as a fire claimed now.
      if (entry !== null) await queue.log.dropUnpublished([entry._id]);
    }
    const owner = await this.options.owner(s.owner_id);
    const refusal = refusalOf(owner, s.task);
    if (refusal !== null || owner === null) return { state: 'refused', reason: refusal };
    if (overlap && s.overlap !== 'allow' && s.last_task_id !== null) {
      const last = await queue.results.get(s.last_task_id);
      if (!READY_STATES.has(last.status)) {
        if (s.overlap === 'skip') return { state: 'skipped', reason: `the last run (${s.last_task_id}) has not finished` };
        if (s.overlap === 'buffer_one') {
          if (s.buffered_run !== null) return { state: 'skipped', reason: 'the last run has not finished and one run is already buffered' };
          return { state: 'buffered', reason: `waits for the last run (${s.last_task_id}) to finish` };
        }
        // cancel_previous: the running one is terminated, then this one is published.
        const entry = await queue.log.get(s.last_task_id);
        if (entry !== null) await queue.revoke(entry, true);
      }
    }
    return this.publish(s, owner, run, dueTime);
  }

  private async publish(s: ScheduleDoc, owner: Principal, run: RunDoc, dueTime: Date): Promise<Partial<RunDoc>> {
    // A broker not reached yet (a process just started after downtime, or reconnecting) took no
    // message and left no history entry: the fire is tried again while its claim holds, so that
    // a short outage makes it late, not failed.
    const retryUntil = Date.now() + Math.min(this.options.claimLeaseMs / 2, BROKER_RETRY_FOR_MS);
    for (;;) {
      const outcome = await this.publishOnce(s, owner, run, dueTime);
      if (outcome !== BROKER_NOT_REACHED) return outcome;
      if (Date.now() >= retryUntil) {
        return { state: 'failed', reason: 'The task broker could not be reached while the fire was claimed.' };
      }
      await delay(BROKER_RETRY_EVERY_MS);
    }
  }

  private async publishOnce(
    s: ScheduleDoc,
    owner: Principal,
    run: RunDoc,
    dueTime: Date,
  ): Promise<Partial<RunDoc> | typeof BROKER_NOT_REACHED> {
    const { queue } = this.options;
    try {
      const queueName = s.queue ?? (await this.defaultQueueOf(s.task));
      await queue.submit(
        submitterAccessOf({ username: owner.username!, isSuperuser: owner.isSuperuser, permissions: owner.permissions }),
        s.owner_id,
        s.task,
        {
          args: parseExactJson(s.args_json) as ExactJsonValue[],
          kwargs: parseExactJson(s.kwargs_json) as ExactJsonObject,
          tags: [`schedule:${s._id}`],
          queue: queueName,
        },
        queueName,
        { taskId: run.task_id!, expires: expiresAt(s) },
      );
      const publishedAt = new Date();
      return { state: 'published', published_at: publishedAt, lateness_ms: Math.max(0, publishedAt.getTime() - dueTime.getTime()) };
    } catch (err) {
      // Without a task id in its detail the broker surely did not take the message (one that may
      // have been taken names the task, and is never sent twice).
      if (err instanceof QueueUnavailableError && err.detail?.task_id === undefined) return BROKER_NOT_REACHED;
      this.options.logger.warn({ err, schedule: s._id }, 'scheduler: could not publish a fire');
      return { state: 'failed', reason: err instanceof Error ? err.message : String(err) };
    }
  }

  private async defaultQueueOf(task: string): Promise<string> {
    try {
      const offered = (await this.options.queue.catalog.get()).tasks.get(task);
      return (offered === undefined ? null : defaultQueue(offered)) ?? CELERY_DEFAULT_QUEUE;
    } catch {
      return CELERY_DEFAULT_QUEUE;
    }
  }

  /**
   * Moves the schedule past the fire `step` dealt with, once: only while it still names that fire
   * as next. Resolves with the new `due_at`, or undefined when the schedule had moved meanwhile.
   */
  private async advance(s: ScheduleDoc, step: DueStep, run: RunDoc | null, missed: number): Promise<Date | null | undefined> {
    const { id, expect, update, due } = this.advanceOf(s, step, run, missed);
    return (await this.options.store.updateIf(id, expect, update)) ? due : undefined;
  }

  /** The compare-and-set update that moves the schedule past the fire `step` dealt with (see advance). */
  private advanceOf(s: ScheduleDoc, step: DueStep, run: RunDoc | null, missed: number): Advance {
    const published = run?.state === 'published';
    const total = s.total_runs + (published ? 1 : 0);
    const finished = step.next === null || (s.max_runs !== null && total >= s.max_runs);
    const next = finished ? null : step.next;
    const failed = run?.state === 'refused' || run?.state === 'failed';
    const buffered = run?.state === 'buffered';
    const holdsBuffer = buffered || s.buffered_run !== null;
    const nextDue = next === null ? (holdsBuffer ? this.recheck(null, new Date()) : null) : dueAt(next, s.jitter_s);
    const due = holdsBuffer && nextDue !== null ? this.recheck(nextDue, new Date()) : nextDue;
    return {
      id: s._id,
      // Not over a change made through the service since the schedule was read (a pause, a new
      // timing): the change stands, and the scheduler looks at the schedule as it is now.
      expect: { next_fire_at: s.next_fire_at, total_runs: s.total_runs, updated_at: s.updated_at },
      due,
      update: {
        $set: {
          next_fire_at: next,
          due_at: due,
          last_fire_at: step.kind === 'fire' ? step.fire : s.last_fire_at,
          total_runs: total,
          finished,
          last_outcome: run?.state ?? 'missed',
          last_reason: run?.reason ?? null,
          failure_streak: failed ? s.failure_streak + 1 : published ? 0 : s.failure_streak,
          ...(published ? { last_task_id: run.task_id } : {}),
          ...(buffered ? { buffered_run: run._id } : {}),
        },
        $inc: { missed_total: missed },
      },
    };
  }

  /** Publishes the buffered run once the last run finished (or finishes one whose process died doing so). */
  private async releaseBuffered(s: ScheduleDoc, now: Date): Promise<void> {
    const { store, queue } = this.options;
    const id = s.buffered_run!;
    let run = await store.getRun(id);
    if (run !== null && (run.state === 'buffered' || run.state === 'claimed')) {
      if (run.state === 'buffered') {
        if (s.last_task_id !== null && !READY_STATES.has((await queue.results.get(s.last_task_id)).status)) return;
        if (!(await store.unbuffer(id, this.id, new Date(now.getTime() + this.options.claimLeaseMs)))) return;
        run = { ...run, state: 'claimed', claimed_by: this.id };
      } else {
        if (run.lease_until.getTime() > now.getTime()) return;
        if (!(await store.takeOver(id, this.id, now, new Date(now.getTime() + this.options.claimLeaseMs)))) return;
        run = { ...run, claimed_by: this.id, recovered: true };
      }
      const fields = await this.execute({ ...s, last_task_id: null }, run, run.fire_at, false);
      if (!(await store.complete(id, this.id, fields))) return;
      run = { ...run, ...fields };
      this.emit({ scheduleId: s._id, kind: run.kind, outcome: run.state, latenessMs: run.lateness_ms, count: 1 });
    }
    const published = run?.state === 'published';
    const failed = run?.state === 'refused' || run?.state === 'failed';
    await store.updateIf(
      s._id,
      { buffered_run: id },
      {
        $set: {
          buffered_run: null,
          ...(published ? { last_task_id: run!.task_id, last_outcome: 'published' as const, failure_streak: 0 } : {}),
          ...(failed ? { last_outcome: run!.state, last_reason: run!.reason } : {}),
        },
        ...(published ? { $inc: { total_runs: 1 } } : {}),
      },
    );
    s.buffered_run = null;
    if (published) s.total_runs += 1;
  }

  /**
   * "Run now": one run published at once as the owner, beside the schedule's own fires (which it
   * neither moves nor counts toward max_runs; the overlap policy does not hold it back).
   */
  async runNow(s: ScheduleDoc): Promise<RunDoc> {
    const now = new Date();
    const run = this.newRun(s._id, `${s._id}@manual@${randomUUID()}`, 'manual', now, now);
    await this.options.store.claim(run);
    const fields = await this.execute(s, run, now, false);
    await this.options.store.complete(run._id, this.id, fields);
    const done = { ...run, ...fields };
    this.emit({ scheduleId: s._id, kind: 'manual', outcome: done.state, latenessMs: done.lateness_ms, count: 1 });
    return done;
  }

  private emit(event: FireEvent): void {
    for (const listener of this.listeners) listener(event);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    this.runningSince?.stop();
    await this.running;
    await Promise.all(this.finishing);
    await this.sweeping;
  }
}
