/**
 * The worker side of Celery remote control: what each command answers, given the worker's
 * state. Pure of any broker code so the replies can be checked in unit tests.
 */
import { isJsonObject, type JsonObject, type JsonValue } from '../queue/protocol/json.js';
import { kombuQueueDict } from '../queue/protocol/entities.js';
import type { TaskQueueType } from '../config/connections.js';
import { TASK_INFO_COMMAND } from '../queue/protocol/task-info.js';
import { DEFAULT_TASK_INFO_ITEMS } from './task-registry.js';

/** What the commands need to know about, and may change in, the worker. */
export interface ControlTarget {
  readonly nodeName: string;
  readonly queues: readonly string[];
  /** How the task queues are declared (TASK_QUEUE_TYPE); default classic. */
  readonly queueType?: TaskQueueType;
  registeredReply(taskinfoitems: readonly string[]): string[];
  /** The `cybercom_task_info` reply (task docs and signatures). */
  taskInfoReply(): JsonObject;
  /** Marks ids revoked; with terminate, stops those running. Returns the ids that were running and got stopped. */
  revoke(ids: string[], terminate: boolean): string[];
  revokedIds(): string[];
  helloPayload(): Record<string, number>;
  mergeRevoked(payload: unknown): void;
  activeRequests(): JsonObject[];
  stats(): JsonObject;
  sendHeartbeat(): void;
  taskEventsEnabled: boolean;
  /** Advances the clock and returns it (a local event). */
  clock(): number;
  /** Moves the clock past a peer's (kombu's LamportClock.adjust); 0 means none was sent. */
  adjustClock(peer: number): void;
}

/** kombu replies `{"error": repr(exc)}` when a handler raises, e.g. an unknown command's KeyError. */
export class ControlCommandError extends Error {
  constructor(readonly reply: string) {
    super(reply);
    this.name = 'ControlCommandError';
  }
}

const ok = (text: string): JsonObject => ({ ok: text });

const idList = (value: JsonValue | undefined): string[] =>
  typeof value === 'string' ? [value] : Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];

type Handler = (target: ControlTarget, args: JsonObject) => JsonValue;

function revoke(target: ControlTarget, ids: string[], terminate: boolean): JsonObject {
  const stopped = target.revoke(ids, terminate);
  if (terminate) return ok(stopped.length === 0 ? 'terminate: tasks unknown' : `terminate: ${stopped.join(', ')}`);
  return ok(`tasks ${ids.join(', ')} flagged as revoked`);
}

const registered: Handler = (target, args) => {
  const items = Array.isArray(args.taskinfoitems) ? args.taskinfoitems.filter((i): i is string => typeof i === 'string') : [];
  return target.registeredReply(items.length > 0 ? items : DEFAULT_TASK_INFO_ITEMS);
};

const HANDLERS: Record<string, Handler> = {
  ping: () => ok('pong'),
  registered,
  dump_tasks: registered,
  [TASK_INFO_COMMAND]: (target) => target.taskInfoReply(),
  active_queues: (target) => target.queues.map((q) => kombuQueueDict(q, target.queueType) as JsonObject),
  stats: (target) => target.stats(),
  active: (target) => target.activeRequests(),
  revoked: (target) => target.revokedIds(),
  clock: (target) => ({ clock: target.clock() }),
  revoke: (target, args) => revoke(target, idList(args.task_id), args.terminate === true),
  terminate: (target, args) => revoke(target, idList(args.task_id), true),
  hello: (target, args) => {
    // Celery answers every peer but itself, sending its revoked ids (mingle).
    if (args.from_node === target.nodeName) return null;
    target.mergeRevoked(args.revoked);
    return { revoked: target.helloPayload(), clock: target.clock() };
  },
  heartbeat: (target) => {
    target.sendHeartbeat();
    return null;
  },
  enable_events: (target) => {
    if (target.taskEventsEnabled) return ok('task events already enabled');
    target.taskEventsEnabled = true;
    return ok('task events enabled');
  },
  disable_events: (target) => {
    if (!target.taskEventsEnabled) return ok('task events already disabled');
    target.taskEventsEnabled = false;
    return ok('task events disabled');
  },
};

/** The reply value for one command; throws ControlCommandError for unknown commands. */
export function runControlCommand(target: ControlTarget, method: string, args: JsonValue): JsonValue {
  const handler = Object.hasOwn(HANDLERS, method) ? HANDLERS[method] : undefined;
  if (handler === undefined) throw new ControlCommandError(`KeyError('${method}')`);
  return handler(target, isJsonObject(args) ? args : {});
}
