/**
 * Time formats on Celery's wire and in its result documents.
 *
 * Celery 5.2.6 parses `eta`/`expires` with its own regex: the fraction digits are taken as
 * microseconds verbatim (so `.123` means 123 µs) and more than six digits are refused. JS dates
 * carry milliseconds, so we always write exactly six digits plus an explicit `+00:00` offset,
 * which every Celery version reads correctly.
 */

const pad = (value: number, width = 2): string => String(value).padStart(width, '0');

function utcParts(date: Date): { datePart: string; timePart: string; micros: number } {
  if (Number.isNaN(date.getTime())) throw new RangeError('Invalid date');
  const datePart = `${pad(date.getUTCFullYear(), 4)}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())}`;
  const timePart = `${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())}`;
  return { datePart, timePart, micros: date.getUTCMilliseconds() * 1000 };
}

/** `2024-06-19T19:23:24.611000+00:00`: aware UTC, six fraction digits (headers `eta`, `expires`). */
export function formatCeleryTimestamp(date: Date): string {
  const { datePart, timePart, micros } = utcParts(date);
  return `${datePart}T${timePart}.${pad(micros, 6)}+00:00`;
}

/**
 * Python's `datetime.utcnow().isoformat()`: naive UTC, the fraction left out when it is zero.
 * This is the `date_done` string Celery 5.2.6's MongoDB backend stores.
 */
export function formatNaiveUtcIsoformat(date: Date): string {
  const { datePart, timePart, micros } = utcParts(date);
  return micros === 0 ? `${datePart}T${timePart}` : `${datePart}T${timePart}.${pad(micros, 6)}`;
}

const ISO_PATTERN = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/i;

/**
 * Parses the ISO-8601 forms Python and kombu produce (`isoformat()`, with or without offset,
 * `Z`, any number of fraction digits). Naive values are UTC (Celery's default `timezone`).
 * Returns null for anything else.
 */
export function parseIsoTimestamp(text: string): Date | null {
  const m = ISO_PATTERN.exec(text.trim());
  if (m === null) return null;
  const [, y, mo, d, h = '0', mi = '0', s = '0', fraction = '', zone] = m;
  const millis = Number(fraction.padEnd(3, '0').slice(0, 3));
  let epoch = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s), millis);
  if (zone !== undefined && zone.toUpperCase() !== 'Z') {
    const sign = zone.startsWith('-') ? -1 : 1;
    const digits = zone.slice(1).replace(':', '');
    const offsetMinutes = Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2) || '0');
    epoch -= sign * offsetMinutes * 60_000;
  }
  return Number.isNaN(epoch) ? null : new Date(epoch);
}
