/**
 * The tasks live workers offer, learnt with Celery remote control (`registered` with
 * `__doc__`, `active_queues`, and `cybercom_task_info` for docs and signatures where workers
 * answer it) and cached briefly so listing and submitting don't broadcast
 * on every request. A task registered by no live worker is unknown.
 *
 * A broadcast always lasts its whole reply timeout (nobody knows how many workers will answer),
 * so no request waits for one once a list is known: an expired list is still served while one
 * refresh runs in the background (stale-while-revalidate), and the next requests get the new
 * list. Only the very first request, an explicit refresh, and a cache lifetime of 0 (no cache)
 * wait for the answer.
 *
 * A worker that answers is believed at once (a task it no longer registers leaves the list). A
 * worker that misses one broadcast keeps its last answer for that refresh: a worker busy
 * dispatching or terminating a task, or on a loaded machine, can answer after the reply timeout,
 * and dropping it would turn submissions of the tasks it still offers into 404s. Missing a second
 * broadcast in a row takes it out of the list.
 */
import type { ControlClient, NodeReplies } from '../remote-control/control-client.js';
import type { ParsedRegisteredTask } from '../protocol/registered-tasks.js';
import type { TaskInfoReply, TaskSignature } from '../protocol/task-info.js';
import type { JsonObject } from '../protocol/json.js';
import { TaskInfoRefusals } from './task-info-refusals.js';

export interface CatalogTask {
  name: string;
  docstring: string | null;
  /** From `cybercom_task_info`; null when no worker offering the task answers it. */
  signature: TaskSignature | null;
  /** Queues consumed by at least one worker that registers the task. */
  queues: string[];
  workers: string[];
}

export interface TaskCatalogSnapshot {
  tasks: Map<string, CatalogTask>;
  /** Every queue any live worker consumes. */
  queues: string[];
  workers: string[];
  fetchedAt: number;
}

/** The youngest list that a refusal may still cause to be asked again. */
const RECHECK_MIN_AGE_MS = 1_000;

/** Broadcasts in a row a worker may miss and still be listed with its last answer. */
const MISSES_FORGIVEN = 1;

/** What one worker last answered to each of the catalog's three broadcasts. */
interface WorkerAnswers {
  registered: ParsedRegisteredTask[] | undefined;
  queues: JsonObject[] | undefined;
  taskInfo: TaskInfoReply | undefined;
  /** Broadcasts in a row it did not answer at all. */
  missed: number;
}

/** Celery's built-in tasks are never offered through the API. */
const isBuiltin = (name: string): boolean => name.startsWith('celery.');

/**
 * Where a task's description comes from. Older Celery workers (5.2 among them) send the docstring
 * as `__doc__` when asked; newer ones (5.7 among them) refuse every attribute starting with "_",
 * and stock Celery offers no other source of the docstring. They do send any other attribute asked for, and `@app.task(...)` turns
 * its extra keyword arguments into task attributes, so a task declared with
 * `description="..."` is described on every version. Only what a worker sent is shown: no
 * description from either source is `null`, never a guess.
 */
const DOC_ITEMS = ['__doc__', 'description'];

function docstringOf(attributes: Record<string, string>): string | null {
  for (const item of DOC_ITEMS) {
    const value = attributes[item]?.trim();
    if (value !== undefined && value !== '' && value !== 'None') return value;
  }
  return null;
}

export class TaskCatalog {
  private snapshot: TaskCatalogSnapshot | null = null;
  private inflight: Promise<TaskCatalogSnapshot> | null = null;
  private answers = new Map<string, WorkerAnswers>();
  private readonly refusals = new TaskInfoRefusals();

  constructor(
    private readonly control: ControlClient,
    private readonly options: { cacheSeconds: number; replyTimeoutMs: number },
  ) {}

  async get(forceRefresh = false): Promise<TaskCatalogSnapshot> {
    const known = this.snapshot;
    if (known === null || forceRefresh || this.options.cacheSeconds <= 0) return this.refresh();
    if (Date.now() - known.fetchedAt >= this.options.cacheSeconds * 1000) {
      // A failed refresh keeps the known list; the next request past expiry tries again.
      this.refresh().catch(() => undefined);
    }
    return known;
  }

  /**
   * The known list when it `satisfies` the caller, else a freshly asked one: a refusal ("no live
   * worker offers this") is given on the word of a fresh list only. Each API process keeps its
   * own list, so a worker that came up after this process last asked (and that another process
   * may already show) would otherwise be refused here until the list expires. A list younger
   * than RECHECK_MIN_AGE_MS is not asked again, and concurrent callers share one broadcast, so
   * requests for tasks nobody offers cannot turn into a broadcast each.
   */
  async getSatisfying(satisfies: (snapshot: TaskCatalogSnapshot) => boolean): Promise<TaskCatalogSnapshot> {
    const known = await this.get();
    if (satisfies(known) || Date.now() - known.fetchedAt < RECHECK_MIN_AGE_MS) return known;
    return this.refresh();
  }

  /** The last list learnt, without asking the workers; null before the first answer. */
  peek(): TaskCatalogSnapshot | null {
    return this.snapshot;
  }

  /** One broadcast at a time: concurrent callers share its answer. */
  private refresh(): Promise<TaskCatalogSnapshot> {
    this.inflight ??= this.fetch().finally(() => {
      this.inflight = null;
    });
    return this.inflight;
  }

  private async fetch(): Promise<TaskCatalogSnapshot> {
    const timeoutMs = this.options.replyTimeoutMs;
    const [registered, activeQueues, taskInfo] = await Promise.all([
      this.control.registered(DOC_ITEMS, { timeoutMs }),
      this.control.activeQueues({ timeoutMs }),
      this.control.taskInfo({ timeoutMs, ...this.refusals.addressing() }),
    ]);
    this.refusals.note(taskInfo);
    this.answers = this.remember(registered, activeQueues, taskInfo);
    const tasks = new Map<string, CatalogTask>();
    const allQueues = new Set<string>();
    const workers = new Set<string>();
    for (const [node, answer] of this.answers) {
      if (answer.registered === undefined && answer.queues === undefined) continue;
      workers.add(node);
      const nodeQueues = (answer.queues ?? []).map((q) => q.name).filter((n): n is string => typeof n === 'string');
      for (const q of nodeQueues) allQueues.add(q);
      for (const entry of answer.registered ?? []) {
        if (isBuiltin(entry.name)) continue;
        const task = tasks.get(entry.name) ?? { name: entry.name, docstring: null, signature: null, queues: [], workers: [] };
        if (task.docstring === null) task.docstring = docstringOf(entry.attributes);
        for (const q of nodeQueues) if (!task.queues.includes(q)) task.queues.push(q);
        task.workers.push(node);
        tasks.set(entry.name, task);
      }
    }
    for (const task of tasks.values()) {
      task.queues.sort();
      task.workers.sort();
      fillFromTaskInfo(task, this.answers);
    }
    this.snapshot = { tasks, queues: [...allQueues].sort(), workers: [...workers].sort(), fetchedAt: Date.now() };
    return this.snapshot;
  }

  /**
   * Each worker's answers after a broadcast round: a node that answered any of the three takes
   * its new answers (and keeps its last one to a broadcast it missed this time); a node that
   * answered none keeps all of its last ones while it has missed no more than MISSES_FORGIVEN
   * rounds in a row.
   */
  private remember(
    registered: NodeReplies<ParsedRegisteredTask[]>,
    activeQueues: NodeReplies<JsonObject[]>,
    taskInfo: NodeReplies<TaskInfoReply>,
  ): Map<string, WorkerAnswers> {
    const next = new Map<string, WorkerAnswers>();
    for (const node of new Set([...Object.keys(registered), ...Object.keys(activeQueues), ...Object.keys(taskInfo)])) {
      const before = this.answers.get(node);
      next.set(node, {
        registered: registered[node] ?? before?.registered,
        queues: activeQueues[node] ?? before?.queues,
        taskInfo: taskInfo[node] ?? before?.taskInfo,
        missed: 0,
      });
    }
    for (const [node, before] of this.answers) {
      if (!next.has(node) && before.missed < MISSES_FORGIVEN) next.set(node, { ...before, missed: before.missed + 1 });
    }
    return next;
  }
}

/**
 * The signature, and the docstring when `registered` gave none, from the first worker (by node
 * name, so the choice does not depend on reply order) offering the task that answered
 * `cybercom_task_info` with it. Workers that do not know the command leave both as they were.
 */
function fillFromTaskInfo(task: CatalogTask, answers: ReadonlyMap<string, WorkerAnswers>): void {
  for (const node of task.workers) {
    const reply = answers.get(node)?.taskInfo;
    const info = reply?.kind === 'tasks' ? reply.tasks.get(task.name) : undefined;
    if (info === undefined) continue;
    task.docstring ??= info.doc;
    task.signature ??= info.signature;
  }
}

/** A signature in the API's JSON: Python's parameter kinds, `default_is_repr` only when true. */
export function signatureJson(signature: TaskSignature | null): JsonObject | null {
  if (signature === null) return null;
  return {
    text: signature.text,
    parameters: signature.parameters.map((p) => {
      const out: JsonObject = { name: p.name, kind: p.kind };
      if (p.default !== undefined) out.default = p.default;
      if (p.defaultIsRepr === true) out.default_is_repr = true;
      if (p.annotation !== undefined) out.annotation = p.annotation;
      return out;
    }),
  };
}

/** The queue a submission goes to when it names none: Celery's default if offered, else the first. */
export function defaultQueue(task: CatalogTask): string | null {
  if (task.queues.includes('celery')) return 'celery';
  return task.queues[0] ?? null;
}
