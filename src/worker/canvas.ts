/**
 * Celery's canvas as it travels in a task message's embed: `callbacks` (link), `errbacks`
 * (link_error), `chain` (the remaining steps, last step first) and `chord` (the body a chord
 * header task belongs to). Each is a serialized Signature:
 *
 *   {"task": name, "args": [...], "kwargs": {...}, "options": {...},
 *    "subtask_type": null | "group" | "chain" | "chord", "immutable": bool, "chord_size": n}
 *
 * This module only reads signatures and turns them into messages to publish; the worker decides
 * when (after SUCCESS: callbacks then the next chain step; after FAILURE: errbacks).
 */
import { randomUUID } from 'node:crypto';
import { isJsonObject, type JsonObject, type JsonValue } from '../queue/protocol/json.js';
import type { ExactJsonValue } from '../queue/protocol/exact-numbers.js';
import type { HeaderValue, TaskEmbed } from '../queue/protocol/task-message.js';
import { parseIsoTimestamp } from '../queue/protocol/timestamps.js';
import type { PublishTaskInput } from '../queue/publishing/task-publisher.js';

export interface Signature {
  task: string;
  args: JsonValue[];
  kwargs: JsonObject;
  options: JsonObject;
  subtaskType: string | null;
  immutable: boolean;
}

export class InvalidSignatureError extends Error {
  constructor(why: string) {
    super(`invalid signature in the task message: ${why}`);
    this.name = 'InvalidSignatureError';
  }
}

export function parseSignature(value: JsonValue): Signature {
  if (!isJsonObject(value)) throw new InvalidSignatureError('not an object');
  const { task, args = [], kwargs = {}, options = {}, subtask_type: subtaskType = null, immutable = false } = value;
  if (typeof task !== 'string' || task === '') throw new InvalidSignatureError('"task" is not a name');
  if (!Array.isArray(args)) throw new InvalidSignatureError(`${task}: "args" is not a list`);
  if (!isJsonObject(kwargs)) throw new InvalidSignatureError(`${task}: "kwargs" is not an object`);
  if (!isJsonObject(options)) throw new InvalidSignatureError(`${task}: "options" is not an object`);
  if (subtaskType !== null && typeof subtaskType !== 'string') throw new InvalidSignatureError(`${task}: "subtask_type" is not a string`);
  return { task, args, kwargs, options, subtaskType, immutable: immutable === true };
}

/** A list of signatures (callbacks, errbacks, chain); absent means none. */
export function parseSignatureList(value: JsonValue | undefined): Signature[] {
  if (value === null || value === undefined) return [];
  if (!Array.isArray(value)) throw new InvalidSignatureError('expected a list of signatures');
  return value.map(parseSignature);
}

/**
 * The next step of a chain and what remains after it. Celery stores the remaining steps in
 * reverse, so the next one is the last element and the rest travels on in the same order.
 */
export function popChain(chain: JsonValue | undefined): { next: Signature; rest: JsonValue[] } | null {
  if (chain === null || chain === undefined) return null;
  if (!Array.isArray(chain)) throw new InvalidSignatureError('"chain" is not a list');
  if (chain.length === 0) return null;
  return { next: parseSignature(chain[chain.length - 1]!), rest: chain.slice(0, -1) };
}

/** The task ids a chain's remaining steps will have (set by the client when it froze the chain). */
export function chainTaskIds(chain: JsonValue | undefined): string[] {
  if (!Array.isArray(chain)) return [];
  return chain.flatMap((step) => {
    const id = isJsonObject(step) && isJsonObject(step.options) ? step.options.task_id : undefined;
    return typeof id === 'string' ? [id] : [];
  });
}

export interface ApplyContext {
  /** Prepended to the signature's own args unless it is immutable (Celery's partial application). */
  args?: ExactJsonValue[];
  parentId: string;
  rootId: string;
  /** Remaining chain steps to carry in the message (only for the next step of a chain). */
  chain?: JsonValue[];
  /** Queue for signatures that name none: what an unrouted Celery send uses. */
  defaultQueue: string;
  /**
   * Headers copied from the message that triggered the step. They win over the signature's:
   * a signature riding on a message cannot claim another submitter than the message itself.
   */
  inheritedHeaders?: Record<string, HeaderValue>;
  authenticatedUser?: string | null;
  now?: Date;
}

/**
 * The messages `signature.apply_async(args, parent_id=..., root_id=...)` sends: one for a task
 * signature, one per member for a group (which share the group's id), the first step (carrying
 * the rest) for a chain. A chord as a callback needs a result join this worker does not start.
 */
export function signatureMessages(sig: Signature, ctx: ApplyContext): PublishTaskInput[] {
  const args = sig.immutable ? [] : (ctx.args ?? []);
  switch (sig.subtaskType) {
    case null:
      return [taskMessage(sig, args, ctx)];
    case 'group': {
      const members = parseSignatureList(sig.kwargs.tasks);
      const groupId = typeof sig.options.task_id === 'string' ? sig.options.task_id : randomUUID();
      return members.flatMap((member, index) =>
        signatureMessages({ ...member, options: { ...member.options, group_id: groupId, group_index: index } }, { ...ctx, args }),
      );
    }
    case 'chain': {
      const steps = parseSignatureList(sig.kwargs.tasks);
      const [first, ...rest] = steps;
      if (first === undefined) return [];
      const restJson = rest.map(signatureJson).reverse();
      return signatureMessages(first, { ...ctx, args, chain: [...restJson, ...(ctx.chain ?? [])] });
    }
    default:
      throw new InvalidSignatureError(`${sig.task}: a "${sig.subtaskType}" signature cannot be applied by this worker`);
  }
}

function taskMessage(sig: Signature, prepended: ExactJsonValue[], ctx: ApplyContext): PublishTaskInput {
  const o = sig.options;
  const now = ctx.now ?? new Date();
  const queue = str(o.queue) ?? (isJsonObject(o.queue) ? str(o.queue.name) : null) ?? str(o.routing_key) ?? ctx.defaultQueue;
  const embed: TaskEmbed = {
    callbacks: (o.link as JsonValue | undefined) ?? null,
    errbacks: (o.link_error as JsonValue | undefined) ?? null,
    chain: ctx.chain && ctx.chain.length > 0 ? ctx.chain : null,
    chord: (o.chord as JsonValue | undefined) ?? null,
  };
  const headers: Record<string, HeaderValue> = {
    ...(isJsonObject(o.headers) ? (o.headers as Record<string, HeaderValue>) : {}),
    ...(ctx.inheritedHeaders ?? {}),
  };
  const input: PublishTaskInput = {
    taskName: sig.task,
    taskId: str(o.task_id) ?? randomUUID(),
    args: [...prepended, ...sig.args],
    kwargs: sig.kwargs,
    queue,
    headers,
    authenticatedUser: ctx.authenticatedUser ?? null,
    parentId: ctx.parentId,
    rootId: ctx.rootId,
    groupId: str(o.group_id),
    groupIndex: num(o.group_index),
    shadow: str(o.shadow),
    embed,
  };
  const eta = timestamp(o.eta, now) ?? (num(o.countdown) !== null ? new Date(now.getTime() + num(o.countdown)! * 1000) : null);
  if (eta) input.eta = eta;
  const expires = timestamp(o.expires, now);
  if (expires) input.expires = expires;
  const hard = num(o.time_limit);
  const soft = num(o.soft_time_limit);
  if (hard !== null || soft !== null) input.timeLimit = { hard, soft };
  const priority = num(o.priority);
  if (priority !== null) input.priority = priority;
  if (o.ignore_result === true) input.ignoreResult = true;
  return input;
}

function signatureJson(sig: Signature): JsonValue {
  return {
    task: sig.task,
    args: sig.args,
    kwargs: sig.kwargs,
    options: sig.options,
    subtask_type: sig.subtaskType,
    immutable: sig.immutable,
  };
}

const str = (value: JsonValue | undefined): string | null => (typeof value === 'string' && value !== '' ? value : null);
const num = (value: JsonValue | undefined): number | null => (typeof value === 'number' && Number.isFinite(value) ? value : null);

/** An ISO timestamp, or seconds from now (how Celery accepts `expires`). */
function timestamp(value: JsonValue | undefined, now: Date): Date | null {
  if (typeof value === 'number' && Number.isFinite(value)) return new Date(now.getTime() + value * 1000);
  if (typeof value === 'string') return parseIsoTimestamp(value);
  return null;
}
