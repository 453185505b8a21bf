/**
 * Defensive parsing of incoming task messages (from Python clients or our own publisher).
 * Mirrors what a Celery 5.2.6 worker checks (protocol 2 headers: `id` and `task` present, body a
 * JSON `[args, kwargs, embed]` triple, supported content type and encoding) and returns either a typed task or a
 * typed reason to refuse it, never throwing on malformed input.
 */
import type { Message } from 'amqplib';
import { isJsonObject, type JsonObject, type JsonValue } from './json.js';
import { decodeKombuEnvelopes, UnsupportedEnvelopeError } from './kombu-envelopes.js';
import { AUTHENTICATED_USER_HEADER, TASK_CONTENT_TYPE, type HeaderValue, type TaskEmbed } from './task-message.js';
import { parseIsoTimestamp } from './timestamps.js';

/** Header keys that belong to the protocol; everything else is a custom header. */
export const PROTOCOL_HEADER_KEYS: ReadonlySet<string> = new Set([
  'lang',
  'task',
  'id',
  'shadow',
  'eta',
  'expires',
  'group',
  'group_index',
  'retries',
  'timelimit',
  'root_id',
  'parent_id',
  'argsrepr',
  'kwargsrepr',
  'origin',
  'ignore_result',
  'meth',
  'replaced_task_nesting',
  'stamped_headers',
  'stamps',
]);

export interface IncomingTask {
  taskId: string;
  taskName: string;
  args: JsonValue[];
  kwargs: JsonObject;
  embed: TaskEmbed;
  eta: Date | null;
  expires: Date | null;
  retries: number;
  timeLimit: { hard: number | null; soft: number | null };
  rootId: string | null;
  parentId: string | null;
  groupId: string | null;
  groupIndex: number | null;
  shadow: string | null;
  origin: string | null;
  ignoreResult: boolean;
  argsrepr: string | null;
  kwargsrepr: string | null;
  authenticatedUser: string | null;
  /** Headers that are not part of the protocol (e.g. `authenticated_user`). */
  customHeaders: Record<string, HeaderValue>;
  correlationId: string | null;
  replyTo: string | null;
  deliveryInfo: { exchange: string; routingKey: string; redelivered: boolean; priority: number | null };
}

export type RejectionReason =
  /** Content type is not JSON: Celery refuses it as untrusted content. */
  | 'untrusted-content'
  /** No `task` header: a protocol-1 or foreign message. */
  | 'not-protocol-2'
  /** `id` header missing or not a string. */
  | 'missing-id'
  /** The body is not UTF-8 JSON, or contains an unknown kombu envelope. */
  | 'undecodable-body'
  /** The body or a header has the wrong shape (e.g. not a three-element array, bad eta). */
  | 'invalid-task';

export interface RejectedMessage {
  reason: RejectionReason;
  detail: string;
  taskId: string | null;
  taskName: string | null;
}

export type ParseResult = { ok: true; task: IncomingTask } | ({ ok: false } & RejectedMessage);

const asString = (value: unknown): string | null => (typeof value === 'string' ? value : null);
const asNumber = (value: unknown): number | null => (typeof value === 'number' && Number.isFinite(value) ? value : null);

export function parseTaskMessage(message: Pick<Message, 'content' | 'properties' | 'fields'>): ParseResult {
  const headers: Record<string, unknown> = isJsonObject(message.properties.headers) ? message.properties.headers : {};
  const taskName = asString(headers.task);
  const taskId = asString(headers.id);
  const reject = (reason: RejectionReason, detail: string): ParseResult => ({ ok: false, reason, detail, taskId, taskName });

  if (taskName === null || taskName === '') return reject('not-protocol-2', 'message has no "task" header');
  if (taskId === null || taskId === '') return reject('missing-id', 'message has no "id" header');
  const contentType = message.properties.contentType as unknown;
  if (contentType !== TASK_CONTENT_TYPE) {
    return reject('untrusted-content', `content type ${JSON.stringify(contentType ?? null)} is not accepted (only ${TASK_CONTENT_TYPE})`);
  }

  let body: JsonValue;
  try {
    body = decodeKombuEnvelopes(JSON.parse(message.content.toString('utf8')) as JsonValue);
  } catch (error) {
    const why = error instanceof UnsupportedEnvelopeError || error instanceof SyntaxError ? error.message : String(error);
    return reject('undecodable-body', why);
  }
  if (!Array.isArray(body) || body.length !== 3) return reject('invalid-task', 'body must be [args, kwargs, embed]');
  const [args, kwargs, embedRaw] = body;
  if (!Array.isArray(args)) return reject('invalid-task', 'args must be an array');
  if (!isJsonObject(kwargs)) return reject('invalid-task', 'kwargs must be an object');
  if (embedRaw !== null && !isJsonObject(embedRaw)) return reject('invalid-task', 'embed must be an object');

  const eta = optionalTimestamp(headers.eta);
  const expires = optionalTimestamp(headers.expires);
  if (eta === undefined) return reject('invalid-task', `invalid eta ${JSON.stringify(headers.eta)}`);
  if (expires === undefined) return reject('invalid-task', `invalid expires ${JSON.stringify(headers.expires)}`);

  const timelimit = Array.isArray(headers.timelimit) ? headers.timelimit : [];
  const customHeaders: Record<string, HeaderValue> = {};
  for (const [key, value] of Object.entries(headers)) {
    if (!PROTOCOL_HEADER_KEYS.has(key)) customHeaders[key] = value as HeaderValue;
  }
  const embed: TaskEmbed = {
    callbacks: embedRaw?.callbacks ?? null,
    errbacks: embedRaw?.errbacks ?? null,
    chain: embedRaw?.chain ?? null,
    chord: embedRaw?.chord ?? null,
  };

  return {
    ok: true,
    task: {
      taskId,
      taskName,
      args,
      kwargs,
      embed,
      eta,
      expires,
      retries: asNumber(headers.retries) ?? 0,
      timeLimit: { hard: positiveOrNull(timelimit[0]), soft: positiveOrNull(timelimit[1]) },
      rootId: asString(headers.root_id),
      parentId: asString(headers.parent_id),
      groupId: asString(headers.group),
      groupIndex: asNumber(headers.group_index),
      shadow: asString(headers.shadow),
      origin: asString(headers.origin),
      ignoreResult: headers.ignore_result === true,
      argsrepr: asString(headers.argsrepr),
      kwargsrepr: asString(headers.kwargsrepr),
      authenticatedUser: asString(headers[AUTHENTICATED_USER_HEADER]),
      customHeaders,
      correlationId: asString(message.properties.correlationId),
      replyTo: asString(message.properties.replyTo),
      deliveryInfo: {
        exchange: message.fields.exchange,
        routingKey: message.fields.routingKey,
        redelivered: message.fields.redelivered,
        priority: asNumber(message.properties.priority),
      },
    },
  };
}

/** null when absent, a Date when valid, undefined when present but unreadable. */
function optionalTimestamp(value: unknown): Date | null | undefined {
  if (value === null || value === undefined) return null;
  if (typeof value !== 'string') return undefined;
  return parseIsoTimestamp(value) ?? undefined;
}

function positiveOrNull(value: unknown): number | null {
  const n = asNumber(value);
  return n !== null && n > 0 ? n : null;
}
