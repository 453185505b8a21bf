/**
 * Celery event messages (as celery/events/dispatcher.py sends them): JSON objects on the `celeryev` topic exchange, routing key
 * = event type with dots, transient, with a `hostname` header. Task events are sent one per
 * message, or several in one `task.multi` message holding an array (receivers accept both).
 */
import { loadavg, type as osType } from 'node:os';
import type { Options } from 'amqplib';
import type { JsonObject, JsonValue } from './json.js';
import { fieldTable } from './amqp-table.js';

export type WorkerEventType = 'worker-online' | 'worker-heartbeat' | 'worker-offline';
export type TaskEventType =
  'task-received' | 'task-started' | 'task-succeeded' | 'task-failed' | 'task-rejected' | 'task-revoked' | 'task-retried';

/** Heartbeat interval Celery workers use (seconds); monitors expect one within 2 × freq. */
export const HEARTBEAT_INTERVAL_S = 2;
export const SOFTWARE_IDENT = 'cybercom-ts';
export const SOFTWARE_VERSION = '0.1.0';

export const eventRoutingKey = (type: string): string => type.replace(/-/g, '.');

/** Python's `utcoffset()`: whole hours, positive west of UTC (like `time.timezone`). */
export function pythonUtcOffsetHours(date = new Date()): number {
  return Math.floor(date.getTimezoneOffset() / 60);
}

/** How long a computed UTC offset is reused: it changes only with daylight saving time. */
const UTC_OFFSET_REUSE_MS = 60_000;
let utcOffset = { hours: pythonUtcOffsetHours(), computedAt: Date.now() };

/**
 * pythonUtcOffsetHours() of a moment, recomputed at most once a minute: a busy worker sends
 * thousands of events a second, and the offset is the same for all but those of the minute
 * after a daylight-saving switch.
 */
function utcOffsetHoursAt(ms: number): number {
  if (Math.abs(ms - utcOffset.computedAt) >= UTC_OFFSET_REUSE_MS) {
    utcOffset = { hours: pythonUtcOffsetHours(new Date(ms)), computedAt: ms };
  }
  return utcOffset.hours;
}

export interface EventEnvelopeInput {
  hostname: string;
  clock: number;
  now?: Date;
}

export function buildEvent(type: WorkerEventType | TaskEventType, fields: JsonObject, envelope: EventEnvelopeInput): JsonObject {
  const nowMs = envelope.now?.getTime() ?? Date.now();
  return {
    hostname: envelope.hostname,
    utcoffset: utcOffsetHoursAt(nowMs),
    pid: process.pid,
    clock: envelope.clock,
    ...fields,
    type,
    timestamp: nowMs / 1000,
  };
}

export interface WorkerStatus {
  active: number;
  processed: number;
}

export function workerEventFields(status: WorkerStatus): JsonObject {
  const load: JsonValue[] = loadavg().map((n) => Math.round(n * 100) / 100);
  return {
    freq: HEARTBEAT_INTERVAL_S,
    active: status.active,
    processed: status.processed,
    loadavg: load,
    sw_ident: SOFTWARE_IDENT,
    sw_ver: SOFTWARE_VERSION,
    sw_sys: osType(),
  };
}

export function eventPublishOptions(hostname: string): Options.Publish {
  return { contentType: 'application/json', contentEncoding: 'utf-8', deliveryMode: 1, headers: fieldTable({ hostname }) };
}
