/**
 * Celery task messages, protocol v2 with the JSON serializer, built exactly as Celery 5.2.6's
 * `send_task` builds them (as captured from that version on the wire): every protocol header present
 * (null when unused), the same AMQP properties, and the three-element body.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Options } from 'amqplib';
import type { JsonValue } from './json.js';
import { pythonRepr } from './python-repr.js';
import { exactJson, type ExactJsonObject, type ExactJsonValue } from './exact-numbers.js';
import { formatCeleryTimestamp } from './timestamps.js';
import { fieldTable } from './amqp-table.js';

export const TASK_CONTENT_TYPE = 'application/json';
export const TASK_CONTENT_ENCODING = 'utf-8';

/** Our custom header carrying the API user who submitted the task (§2.4: merged flat into the headers). */
export const AUTHENTICATED_USER_HEADER = 'authenticated_user';

/** Values an AMQP header table can carry and py-amqp decodes. */
export type HeaderValue = null | boolean | number | string | HeaderValue[] | { [key: string]: HeaderValue };

/** The protocol-2 header table, in the order Python writes it. */
export interface TaskHeaders {
  lang: string;
  task: string;
  id: string;
  shadow: string | null;
  eta: string | null;
  expires: string | null;
  group: string | null;
  group_index: number | null;
  retries: number;
  /** [hard, soft] seconds: the code's order, not the protocol page's. */
  timelimit: [number | null, number | null];
  root_id: string;
  parent_id: string | null;
  argsrepr: string;
  kwargsrepr: string;
  origin: string;
  ignore_result: boolean;
  [custom: string]: HeaderValue;
}

export interface TaskEmbed {
  callbacks: JsonValue;
  errbacks: JsonValue;
  chain: JsonValue;
  chord: JsonValue;
}

export type TaskBody = [args: ExactJsonValue[], kwargs: ExactJsonObject, embed: TaskEmbed];

/** AMQP basic properties Celery sets on a task message (amqplib's option names). */
export interface TaskProperties {
  contentType: string;
  contentEncoding: string;
  correlationId: string;
  replyTo: string;
  deliveryMode: 2;
  priority: number;
  /** Remaining lifetime in ms as a decimal string, only when the task has `expires`. */
  expiration?: string;
}

export interface TaskMessage {
  headers: TaskHeaders;
  properties: TaskProperties;
  body: TaskBody;
}

export interface TaskMessageInput {
  taskName: string;
  taskId?: string;
  args?: ExactJsonValue[];
  kwargs?: ExactJsonObject;
  /** User on whose behalf the task runs; sent as the `authenticated_user` header (null when anonymous). */
  authenticatedUser?: string | null;
  /** Hard and soft time limits in seconds. */
  timeLimit?: { hard?: number | null; soft?: number | null };
  eta?: Date | null;
  expires?: Date | null;
  retries?: number;
  rootId?: string | null;
  parentId?: string | null;
  groupId?: string | null;
  groupIndex?: number | null;
  shadow?: string | null;
  ignoreResult?: boolean;
  priority?: number;
  /** Sender node name; Python uses `gen<pid>@<hostname>`. */
  origin?: string;
  /** Python puts its client "oid" here (used only by the rpc:// backend). */
  replyTo?: string;
  /** More custom headers, merged flat like `send_task(headers=...)`. They cannot replace protocol headers. */
  extraHeaders?: Record<string, HeaderValue>;
  /** Canvas of the message (callbacks, errbacks, chain, chord); empty when absent. */
  embed?: TaskEmbed;
  /** Clock for the `expiration` property; defaults to now. */
  now?: Date;
}

let origin: string | undefined;
/** Celery's `gen<pid>@<host>`, read once: a system call per message showed in a burst of publishes. */
export const defaultOrigin = (): string => (origin ??= `gen${process.pid}@${hostname()}`);

export function emptyEmbed(): TaskEmbed {
  return { callbacks: null, errbacks: null, chain: null, chord: null };
}

export function buildTaskMessage(input: TaskMessageInput): TaskMessage {
  const taskId = input.taskId ?? randomUUID();
  const args = input.args ?? [];
  const kwargs = input.kwargs ?? {};
  const now = input.now ?? new Date();
  const expires = input.expires ?? null;

  const headers: TaskHeaders = {
    // "py" like the Python client: the worker ignores it, and identical messages mean identical
    // treatment by anything (monitors, tooling) that looks at it.
    lang: 'py',
    task: input.taskName,
    id: taskId,
    shadow: input.shadow ?? null,
    eta: input.eta ? formatCeleryTimestamp(input.eta) : null,
    expires: expires ? formatCeleryTimestamp(expires) : null,
    group: input.groupId ?? null,
    group_index: input.groupIndex ?? null,
    retries: input.retries ?? 0,
    timelimit: [input.timeLimit?.hard ?? null, input.timeLimit?.soft ?? null],
    root_id: input.rootId ?? taskId,
    parent_id: input.parentId ?? null,
    argsrepr: pythonRepr(args),
    kwargsrepr: pythonRepr(kwargs),
    origin: input.origin ?? defaultOrigin(),
    ignore_result: input.ignoreResult ?? false,
  };
  for (const [key, value] of Object.entries(input.extraHeaders ?? {})) {
    if (!(key in headers)) headers[key] = value;
  }
  headers[AUTHENTICATED_USER_HEADER] = input.authenticatedUser ?? null;

  const properties: TaskProperties = {
    contentType: TASK_CONTENT_TYPE,
    contentEncoding: TASK_CONTENT_ENCODING,
    correlationId: taskId,
    replyTo: input.replyTo ?? '',
    deliveryMode: 2,
    priority: input.priority ?? 0,
  };
  if (expires) {
    // Celery ≥ 5.2.0 mirrors `expires` as a per-message TTL, clamped at zero.
    properties.expiration = String(Math.max(0, Math.round(expires.getTime() - now.getTime())));
  }

  return { headers, properties, body: [args, kwargs, input.embed ?? emptyEmbed()] };
}

/** UTF-8 JSON of the body, as kombu's JSON serializer sends it (submitted literals as written). */
export function encodeTaskBody(message: TaskMessage): Buffer {
  return Buffer.from(exactJson(message.body), 'utf8');
}

/** amqplib publish options for a built message, its header numbers typed for every py-amqp. */
export function taskPublishOptions(message: TaskMessage): Options.Publish {
  const { properties } = message;
  const options: Options.Publish = {
    contentType: properties.contentType,
    contentEncoding: properties.contentEncoding,
    correlationId: properties.correlationId,
    replyTo: properties.replyTo,
    deliveryMode: properties.deliveryMode,
    priority: properties.priority,
    headers: fieldTable(message.headers),
  };
  if (properties.expiration !== undefined) options.expiration = properties.expiration;
  return options;
}
