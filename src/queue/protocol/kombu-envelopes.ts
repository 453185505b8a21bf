/**
 * kombu ≥ 5.3 wraps datetimes, dates, times, decimals, UUIDs and bytes in
 * `{"__type__": T, "__value__": V}` objects inside JSON payloads. kombu 5.2.4 (the baseline)
 * wrote plain strings instead. We decode every envelope into exactly the plain JSON value
 * kombu 5.2.4 would have produced, so task code sees one shape whichever Python sent it.
 */
import { isLosslessNumber } from 'lossless-json';
import { isJsonObject, type JsonValue } from './json.js';
import type { ExactJsonValue } from './exact-numbers.js';

export class UnsupportedEnvelopeError extends Error {
  constructor(readonly envelopeType: unknown) {
    super(`Unsupported kombu JSON envelope type: ${JSON.stringify(envelopeType)}`);
    this.name = 'UnsupportedEnvelopeError';
  }
}

/** kombu's own test for an envelope: an object whose keys are exactly these two. */
export function isKombuEnvelope(value: unknown): value is { __type__: JsonValue; __value__: JsonValue } {
  if (!isJsonObject(value)) return false;
  const keys = Object.keys(value);
  return keys.length === 2 && '__type__' in value && '__value__' in value;
}

/** Recursively replaces envelopes. Throws UnsupportedEnvelopeError for an unknown `__type__` (as kombu does). */
export function decodeKombuEnvelopes(value: JsonValue): JsonValue;
export function decodeKombuEnvelopes(value: ExactJsonValue): ExactJsonValue;
export function decodeKombuEnvelopes(value: ExactJsonValue): ExactJsonValue {
  if (Array.isArray(value)) return value.map((item) => decodeKombuEnvelopes(item));
  if (!isJsonObject(value) || isLosslessNumber(value)) return value;
  if (isKombuEnvelope(value)) return decodeEnvelope(value.__type__, value.__value__);
  // Built from entries, not by assignment: assigning to a key "__proto__" (JSON.parse makes it
  // an own key like any other) would set the copy's prototype and drop the key, so a record
  // `{"__proto__": ...}` a task was given arrived empty instead of being refused as the API refuses it.
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, decodeKombuEnvelopes(item)]));
}

function decodeEnvelope(type: JsonValue, raw: JsonValue): JsonValue {
  switch (type) {
    case 'datetime':
      // kombu 5.2.4: isoformat(), with a trailing +00:00 rewritten to Z.
      return typeof raw === 'string' ? raw.replace(/\+00:00$/, 'Z') : fail(type);
    case 'date':
      // kombu 5.2.4 turned a date into midnight of that day, as a naive datetime string.
      return typeof raw === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(raw) ? `${raw}T00:00:00` : fail(type);
    case 'time':
    case 'decimal':
    case 'bytes':
      // time → isoformat(), Decimal → str(); bytes were UTF-8 text to begin with.
      return typeof raw === 'string' ? raw : fail(type);
    case 'base64':
      // Binary data has no JSON form; keep the base64 text rather than inventing one.
      return typeof raw === 'string' ? raw : fail(type);
    case 'uuid':
      return isJsonObject(raw) && typeof raw.hex === 'string' && /^[0-9a-f]{32}$/i.test(raw.hex)
        ? hyphenatedUuid(raw.hex.toLowerCase())
        : fail(type);
    default:
      throw new UnsupportedEnvelopeError(type);
  }
}

function hyphenatedUuid(hex: string): string {
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

function fail(type: JsonValue): never {
  throw new UnsupportedEnvelopeError(type);
}
