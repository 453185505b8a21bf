/**
 * Remote-control ("pidbox") messages as kombu 5.2.4 writes them (kombu/pidbox.py): requests fanned out
 * on `celery.pidbox`, replies on `reply.celery.pidbox` as `{nodename: value}` matched by the
 * `ticket` header.
 */
import type { Message, Options } from 'amqplib';
import { isJsonObject, type JsonObject, type JsonValue } from './json.js';
import { REPLY_EXCHANGE } from './entities.js';
import { fieldTable } from './amqp-table.js';

export interface ControlReplyTo {
  exchange: string;
  routing_key: string;
}

export interface ControlRequest {
  method: string;
  arguments: JsonObject;
  destination: string[] | null;
  pattern: string | null;
  matcher: string | null;
  /** Present (with reply_to) only when the sender wants replies. */
  ticket?: string;
  reply_to?: ControlReplyTo;
}

export interface ControlRequestInput {
  method: string;
  arguments?: JsonObject;
  destination?: string[] | null;
  pattern?: string | null;
  matcher?: 'glob' | 'pcre' | null;
  reply?: { ticket: string; routingKey: string; exchange?: string };
}

export function buildControlRequest(input: ControlRequestInput): ControlRequest {
  const request: ControlRequest = {
    method: input.method,
    arguments: input.arguments ?? {},
    destination: input.destination && input.destination.length > 0 ? input.destination : null,
    pattern: input.pattern ?? null,
    matcher: input.matcher ?? null,
  };
  if (input.reply) {
    request.ticket = input.reply.ticket;
    request.reply_to = { exchange: input.reply.exchange ?? REPLY_EXCHANGE, routing_key: input.reply.routingKey };
  }
  return request;
}

/** Transient JSON with kombu's `clock`/`expires` headers, typed so every py-amqp reads them. */
export function controlPublishOptions(headers: Record<string, string | number>): Options.Publish {
  return { contentType: 'application/json', contentEncoding: 'utf-8', deliveryMode: 1, headers: fieldTable(headers) };
}

/** The sender's Lamport clock from a control message's headers; 0 when absent or unusable. */
export function headerClock(headers: unknown): number {
  const clock = isJsonObject(headers) ? headers.clock : undefined;
  return typeof clock === 'number' && Number.isSafeInteger(clock) && clock > 0 ? clock : 0;
}

export function requestHeaders(clock: number, timeoutMs: number, now = Date.now()): Record<string, number> {
  return { clock, expires: timeoutMs > 0 ? (now + timeoutMs) / 1000 : 0 };
}

/** Parses a request body; null when it is not a usable control request. */
export function parseControlRequest(content: Buffer): ControlRequest | null {
  let raw: unknown;
  try {
    raw = JSON.parse(content.toString('utf8'));
  } catch {
    return null;
  }
  if (!isJsonObject(raw) || typeof raw.method !== 'string') return null;
  const destination = Array.isArray(raw.destination)
    ? raw.destination.filter((d): d is string => typeof d === 'string')
    : typeof raw.destination === 'string'
      ? [raw.destination]
      : null;
  const request: ControlRequest = {
    method: raw.method,
    arguments: isJsonObject(raw.arguments) ? raw.arguments : {},
    destination,
    pattern: typeof raw.pattern === 'string' ? raw.pattern : null,
    matcher: typeof raw.matcher === 'string' ? raw.matcher : null,
  };
  const replyTo = raw.reply_to;
  if (isJsonObject(replyTo) && typeof replyTo.exchange === 'string' && typeof replyTo.routing_key === 'string') {
    request.reply_to = { exchange: replyTo.exchange, routing_key: replyTo.routing_key };
    if (typeof raw.ticket === 'string') request.ticket = raw.ticket;
  }
  return request;
}

/**
 * kombu's `Node.handle_message` selection: an explicit destination list wins; otherwise a
 * pattern with a matcher (`glob` by default, or `pcre`); otherwise every node.
 */
export function isAddressedTo(request: ControlRequest, nodeName: string): boolean {
  if (request.destination && request.destination.length > 0) return request.destination.includes(nodeName);
  if (request.pattern && request.matcher) {
    if (request.matcher === 'pcre') {
      try {
        // Python's re.match anchors at the start only.
        return new RegExp(`^(?:${request.pattern})`).test(nodeName);
      } catch {
        return false;
      }
    }
    return globToRegExp(request.pattern).test(nodeName);
  }
  return true;
}

/** fnmatch-style glob: `*`, `?`, `[seq]`. */
export function globToRegExp(glob: string): RegExp {
  let source = '';
  for (let i = 0; i < glob.length; i++) {
    const ch = glob.charAt(i);
    if (ch === '*') source += '.*';
    else if (ch === '?') source += '.';
    else if (ch === '[') {
      const end = glob.indexOf(']', i + 2);
      if (end === -1) source += '\\[';
      else {
        let set = glob.slice(i + 1, end).replace(/\\/g, '\\\\');
        if (set.startsWith('!')) set = `^${set.slice(1)}`;
        source += `[${set}]`;
        i = end;
      }
    } else source += ch.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  }
  return new RegExp(`^${source}$`, 's');
}

export interface ControlReply {
  ticket: string | null;
  nodeName: string;
  value: JsonValue;
}

/** Reads one reply message (`{nodename: value}` with a `ticket` header); null when malformed. */
export function parseControlReply(message: Pick<Message, 'content' | 'properties'>): ControlReply | null {
  let body: unknown;
  try {
    body = JSON.parse(message.content.toString('utf8'));
  } catch {
    return null;
  }
  if (!isJsonObject(body)) return null;
  const entries = Object.entries(body);
  const first = entries[0];
  if (entries.length !== 1 || first === undefined) return null;
  const headers: Record<string, unknown> = isJsonObject(message.properties.headers) ? message.properties.headers : {};
  return { ticket: typeof headers.ticket === 'string' ? headers.ticket : null, nodeName: first[0], value: first[1] };
}
