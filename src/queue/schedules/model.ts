/**
 * A schedule as the API takes it and as the service database keeps it, and the rules its input
 * must pass (each failure a 400 naming the field). Pure: the time now and the configured minimum
 * interval are given, so the rules are unit-tested as a table.
 *
 * The body of a create (and, merged over the stored schedule, of an update):
 *   name, task, args, kwargs, queue
 *   exactly one of
 *     crontab   "m h dom mon dow" (five fields, or @hourly/@daily/@weekly/@monthly/@yearly)
 *               with timezone (an IANA zone, default UTC)
 *     interval  {every, period: seconds|minutes|hours|days, anchor?}
 *     solar     {event: sunrise|sunset|dawn|dusk|solar_noon, latitude, longitude}
 *     clocked   an ISO 8601 instant with its offset ("Z" or ±hh:mm): one run, then finished
 *   overlap (allow | skip | buffer_one | cancel_previous), catch_up_window (s), jitter (s),
 *   start_time, end_time, max_runs, expires (s, per fired task), paused, note
 */
import isPlainObject from 'is-plain-obj';
import { isLosslessNumber } from 'lossless-json';
import { badRequest } from '../../errors.js';
import { exactJson, type ExactJsonObject, type ExactJsonValue } from '../protocol/exact-numbers.js';
import { parseSubmission, validateTaskName } from '../api/submission.js';
import { SOLAR_EVENTS, cronOf, nextFire, type SolarEvent, type Timing } from './timing.js';

export const OVERLAP_POLICIES = ['allow', 'skip', 'buffer_one', 'cancel_previous'] as const;
export type OverlapPolicy = (typeof OVERLAP_POLICIES)[number];

export const INTERVAL_PERIODS = { seconds: 1, minutes: 60, hours: 3600, days: 86_400 } as const;
export type IntervalPeriod = keyof typeof INTERVAL_PERIODS;

/** The longest catch-up window, jitter and task lifetime accepted: a week, a day and a year. */
export const MAX_CATCH_UP_WINDOW_S = 7 * 86_400;
export const MAX_JITTER_S = 86_400;
export const MAX_EXPIRES_S = 365 * 86_400;
const MAX_NAME_LENGTH = 200;
const MAX_NOTE_LENGTH = 2_000;
/** A solar event must happen at the place within this long of the schedule being saved (see validation). */
export const SOLAR_FIRST_EVENT_WITHIN_MS = 2 * 86_400_000;

const FIELDS = [
  'name',
  'task',
  'args',
  'kwargs',
  'queue',
  'crontab',
  'timezone',
  'interval',
  'solar',
  'clocked',
  'overlap',
  'catch_up_window',
  'jitter',
  'start_time',
  'end_time',
  'max_runs',
  'expires',
  'paused',
  'note',
] as const;
const TIMING_FIELDS = ['crontab', 'interval', 'solar', 'clocked'] as const;

/** What a schedule is: everything its owner chose. */
export interface ScheduleSpec {
  name: string;
  task: string;
  /** The arguments as exact JSON text (numbers kept as written, see exact-numbers.ts). */
  argsJson: string;
  kwargsJson: string;
  queue: string | null;
  timing: Timing;
  /** How the interval was written, to show it back (interval schedules only). */
  intervalAs: { every: number; period: IntervalPeriod } | null;
  overlap: OverlapPolicy;
  catchUpWindowSeconds: number;
  jitterSeconds: number;
  startTime: Date | null;
  endTime: Date | null;
  maxRuns: number | null;
  expiresSeconds: number | null;
  paused: boolean;
  note: string;
}

export interface ValidationContext {
  now: Date;
  /** SCHEDULE_MIN_INTERVAL_S: the shortest interval accepted. */
  minIntervalSeconds: number;
  /** The interval anchor when none is given and the schedule has none yet (its creation time). */
  defaultAnchor: Date;
}

const invalid = (field: string, message: string) => badRequest(`invalid_${field}`, message, { field });

function instant(field: string, value: unknown): Date {
  // An offset is required: a bare local time would be read in the server's zone, which the caller cannot see.
  if (typeof value !== 'string' || !/^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d)$/.test(value)) {
    throw invalid(field, `"${field}" must be an ISO 8601 time with its offset, such as "2026-03-01T02:00:00Z".`);
  }
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) throw invalid(field, `"${field}" is not a valid time.`);
  return date;
}

function optionalInstant(field: string, value: unknown): Date | null {
  return value === undefined || value === null ? null : instant(field, value);
}

function seconds(field: string, value: unknown, max: number, fallback: number): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > max) {
    throw invalid(field, `"${field}" must be a number of seconds from 0 to ${max}.`);
  }
  return value;
}

/** Whether `tz` names a zone this runtime knows (Node's ICU time-zone data). */
export function isKnownTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

function crontabTiming(body: Record<string, unknown>): Timing {
  const cron = body.crontab;
  const tz = body.timezone ?? 'UTC';
  if (typeof tz !== 'string' || tz === '' || !isKnownTimeZone(tz)) {
    throw badRequest('unknown_timezone', `Unknown time zone "${String(tz)}": give an IANA zone name such as "America/Chicago" or "UTC".`, {
      field: 'timezone',
    });
  }
  if (typeof cron !== 'string' || cron.trim() === '')
    throw invalid('crontab', '"crontab" must be a string of five fields: "m h dom mon dow".');
  const pattern = cron.trim().replace(/\s+/g, ' ');
  try {
    cronOf(pattern, tz);
  } catch (error) {
    const why = error instanceof Error ? error.message.replace(/^CronPattern: /, '') : String(error);
    throw invalid('crontab', `Invalid crontab "${pattern}": ${why}. Expected five fields: minute hour day-of-month month day-of-week.`);
  }
  return { kind: 'crontab', cron: pattern, tz };
}

function intervalTiming(value: unknown, ctx: ValidationContext): { timing: Timing; as: { every: number; period: IntervalPeriod } } {
  if (!isPlainObject(value)) throw invalid('interval', '"interval" must be an object: {"every": 15, "period": "minutes"}.');
  for (const key of Object.keys(value)) {
    if (!['every', 'period', 'anchor'].includes(key)) throw invalid('interval', `Unknown interval field "${key}" (every, period, anchor).`);
  }
  const period = value.period ?? 'seconds';
  if (typeof period !== 'string' || !Object.hasOwn(INTERVAL_PERIODS, period)) {
    throw invalid('interval', `"interval.period" must be one of ${Object.keys(INTERVAL_PERIODS).join(', ')}.`);
  }
  const every = value.every;
  if (typeof every !== 'number' || !Number.isFinite(every) || every <= 0)
    throw invalid('interval', '"interval.every" must be a positive number.');
  const everySeconds = every * INTERVAL_PERIODS[period as IntervalPeriod];
  if (!Number.isInteger(everySeconds)) throw invalid('interval', 'The interval must be a whole number of seconds.');
  if (everySeconds < ctx.minIntervalSeconds) {
    throw badRequest(
      'interval_too_short',
      `The interval is ${everySeconds} s; this service runs schedules at most every ${ctx.minIntervalSeconds} s (SCHEDULE_MIN_INTERVAL_S).`,
      { field: 'interval', minimum_seconds: ctx.minIntervalSeconds },
    );
  }
  const anchor = value.anchor === undefined || value.anchor === null ? ctx.defaultAnchor : instant('interval.anchor', value.anchor);
  return { timing: { kind: 'interval', everySeconds, anchor }, as: { every, period: period as IntervalPeriod } };
}

function solarTiming(value: unknown, ctx: ValidationContext): Timing {
  if (!isPlainObject(value))
    throw invalid('solar', '"solar" must be an object: {"event": "sunrise", "latitude": 46.8, "longitude": -89.5}.');
  for (const key of Object.keys(value)) {
    if (!['event', 'latitude', 'longitude'].includes(key))
      throw invalid('solar', `Unknown solar field "${key}" (event, latitude, longitude).`);
  }
  const { event, latitude, longitude } = value;
  if (typeof event !== 'string' || !(SOLAR_EVENTS as readonly string[]).includes(event)) {
    throw invalid('solar', `"solar.event" must be one of ${SOLAR_EVENTS.join(', ')}.`);
  }
  if (typeof latitude !== 'number' || !(latitude >= -90 && latitude <= 90))
    throw invalid('solar', '"solar.latitude" must be from -90 to 90.');
  if (typeof longitude !== 'number' || !(longitude >= -180 && longitude <= 180)) {
    throw invalid('solar', '"solar.longitude" must be from -180 to 180.');
  }
  const timing: Timing = { kind: 'solar', event: event as SolarEvent, lat: latitude, lon: longitude };
  // The rule: the event must happen there within two days of now. Near the poles a sun event can
  // be absent for months (polar day or night); such a schedule would silently never run.
  const first = nextFire(timing, ctx.now);
  if (first === null || first.getTime() - ctx.now.getTime() > SOLAR_FIRST_EVENT_WITHIN_MS) {
    throw badRequest(
      'no_solar_event',
      `There is no ${event} at latitude ${latitude}, longitude ${longitude} today or tomorrow (polar day or night); ` +
        'a solar schedule needs its event within the next two days.',
      { field: 'solar', next_event: first?.toISOString() ?? null },
    );
  }
  return timing;
}

/**
 * The body with its literals kept exact (`900.0`, see exact-numbers.ts) read as numbers, but for
 * the task's arguments, which reach the task as written.
 */
function plainNumbers(value: unknown): unknown {
  if (isLosslessNumber(value)) return Number(value.value);
  if (Array.isArray(value)) return value.map(plainNumbers);
  if (isPlainObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plainNumbers(v)]));
  return value;
}

/**
 * Checks a schedule's whole body. `body` is the create body, or the stored schedule's body with
 * an update's fields laid over it (see `bodyOf`).
 */
export function parseScheduleBody(input: unknown, ctx: ValidationContext): ScheduleSpec {
  if (!isPlainObject(input)) throw badRequest('invalid_body', 'The request body must be a JSON object.');
  const body: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input)) {
    Object.defineProperty(body, key, {
      value: key === 'args' || key === 'kwargs' ? value : plainNumbers(value),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  for (const key of Object.keys(body)) {
    if (!(FIELDS as readonly string[]).includes(key)) {
      throw badRequest('unknown_field', `Unknown field "${key}". Allowed fields: ${FIELDS.join(', ')}.`, { field: key });
    }
  }
  const name = body.name;
  if (typeof name !== 'string' || name.trim() === '' || name.length > MAX_NAME_LENGTH || /[\u0000-\u001f]/.test(name)) {
    throw invalid('name', `"name" must be a text of 1 to ${MAX_NAME_LENGTH} characters.`);
  }
  if (typeof body.task !== 'string') throw invalid('task', '"task" must be a task name such as "tasks.harvest".');
  const task = validateTaskName(body.task);
  // The arguments and queue follow a submission's rules.
  const submission = parseSubmission({ function: task, args: body.args, kwargs: body.kwargs, queue: body.queue }, task);

  const given = TIMING_FIELDS.filter((f) => body[f] !== undefined && body[f] !== null);
  if (given.length !== 1) {
    throw badRequest(
      'invalid_timing',
      `Give exactly one of ${TIMING_FIELDS.join(', ')} (got ${given.length === 0 ? 'none' : given.join(', ')}).`,
    );
  }
  if (body.timezone !== undefined && body.timezone !== null && given[0] !== 'crontab') {
    throw invalid('timezone', '"timezone" belongs to a crontab; intervals, solar events and clocked times are instants.');
  }
  let timing: Timing;
  let intervalAs: ScheduleSpec['intervalAs'] = null;
  switch (given[0]!) {
    case 'crontab':
      timing = crontabTiming(body);
      break;
    case 'interval': {
      const parsed = intervalTiming(body.interval, ctx);
      timing = parsed.timing;
      intervalAs = parsed.as;
      break;
    }
    case 'solar':
      timing = solarTiming(body.solar, ctx);
      break;
    case 'clocked':
      timing = { kind: 'clocked', at: instant('clocked', body.clocked) };
      break;
  }

  const overlap = body.overlap ?? 'allow';
  if (typeof overlap !== 'string' || !(OVERLAP_POLICIES as readonly string[]).includes(overlap)) {
    throw invalid('overlap', `"overlap" must be one of ${OVERLAP_POLICIES.join(', ')}.`);
  }
  const catchUpWindowSeconds = seconds('catch_up_window', body.catch_up_window, MAX_CATCH_UP_WINDOW_S, 0);
  const jitterSeconds = seconds('jitter', body.jitter, MAX_JITTER_S, 0);
  if (timing.kind === 'interval' && jitterSeconds >= timing.everySeconds) {
    throw invalid('jitter', '"jitter" must be shorter than the interval, or runs would change order.');
  }
  const startTime = optionalInstant('start_time', body.start_time);
  const endTime = optionalInstant('end_time', body.end_time);
  if (startTime !== null && endTime !== null && endTime.getTime() <= startTime.getTime()) {
    throw invalid('end_time', '"end_time" must be after "start_time".');
  }
  let maxRuns: number | null = null;
  if (body.max_runs !== undefined && body.max_runs !== null) {
    if (typeof body.max_runs !== 'number' || !Number.isSafeInteger(body.max_runs) || body.max_runs < 1) {
      throw invalid('max_runs', '"max_runs" must be a whole number of at least 1 (or null for no limit).');
    }
    maxRuns = body.max_runs;
  }
  let expiresSeconds: number | null = null;
  if (body.expires !== undefined && body.expires !== null) {
    expiresSeconds = seconds('expires', body.expires, MAX_EXPIRES_S, 0);
    if (expiresSeconds <= 0) throw invalid('expires', '"expires" must be a positive number of seconds.');
  }
  const paused = body.paused ?? false;
  if (typeof paused !== 'boolean') throw invalid('paused', '"paused" must be true or false.');
  const note = body.note ?? '';
  if (typeof note !== 'string' || note.length > MAX_NOTE_LENGTH)
    throw invalid('note', `"note" must be a text of at most ${MAX_NOTE_LENGTH} characters.`);
  if (timing.kind === 'clocked' && timing.at.getTime() < ctx.now.getTime() && !paused) {
    throw invalid('clocked', `"clocked" is in the past (${timing.at.toISOString()}); a one-off schedule must name a time to come.`);
  }
  return {
    name: name.trim(),
    task,
    argsJson: exactJson(submission.args),
    kwargsJson: exactJson(submission.kwargs),
    queue: submission.queue ?? null,
    timing,
    intervalAs,
    overlap: overlap as OverlapPolicy,
    catchUpWindowSeconds,
    jitterSeconds,
    startTime,
    endTime,
    maxRuns,
    expiresSeconds,
    paused,
    note,
  };
}

/** The body a spec was made from, in the API's fields (what GET shows and an update is laid over). */
export function bodyOf(spec: ScheduleSpec, args: ExactJsonValue[], kwargs: ExactJsonObject): Record<string, unknown> {
  const t = spec.timing;
  return {
    name: spec.name,
    task: spec.task,
    args,
    kwargs,
    queue: spec.queue,
    ...(t.kind === 'crontab' ? { crontab: t.cron, timezone: t.tz } : {}),
    ...(t.kind === 'interval'
      ? { interval: { ...(spec.intervalAs ?? { every: t.everySeconds, period: 'seconds' }), anchor: t.anchor.toISOString() } }
      : {}),
    ...(t.kind === 'solar' ? { solar: { event: t.event, latitude: t.lat, longitude: t.lon } } : {}),
    ...(t.kind === 'clocked' ? { clocked: t.at.toISOString() } : {}),
    overlap: spec.overlap,
    catch_up_window: spec.catchUpWindowSeconds,
    jitter: spec.jitterSeconds,
    start_time: spec.startTime?.toISOString() ?? null,
    end_time: spec.endTime?.toISOString() ?? null,
    max_runs: spec.maxRuns,
    expires: spec.expiresSeconds,
    paused: spec.paused,
    note: spec.note,
  };
}

/** An update's fields laid over the stored body; a timing field given replaces the other kinds. */
export function mergeUpdate(current: Record<string, unknown>, update: unknown): Record<string, unknown> {
  if (!isPlainObject(update)) throw badRequest('invalid_body', 'The request body must be a JSON object.');
  const merged: Record<string, unknown> = { ...current };
  if (TIMING_FIELDS.some((f) => update[f] !== undefined && update[f] !== null)) {
    for (const f of TIMING_FIELDS) delete merged[f];
    delete merged.timezone;
  }
  for (const [key, value] of Object.entries(update)) {
    Object.defineProperty(merged, key, { value, enumerable: true, writable: true, configurable: true });
  }
  return merged;
}
