/**
 * Record values as a reader wants them in a table cell, from the values the driver decodes:
 * dates as `2024-05-01 12:00:00 UTC`, large integers grouped, ObjectIds as their hex digits
 * (their creation time as a tooltip), GeoJSON as coordinates or a geometry summary, long text
 * cut short with its length said, arrays and objects as a short JSON preview. Each value also
 * says how a link filters by it (`matchJson`, Extended JSON of the exact value and type), when
 * equality can find it. Everything returned as HTML is escaped here.
 */
import escapeHtml from 'escape-html';
import { doubleText } from '../render/double-text.js';
import { toPlainValue } from '../render/plain-value.js';

export type ValueKind = 'missing' | 'null' | 'bool' | 'number' | 'text' | 'date' | 'objectid' | 'geo' | 'array' | 'object' | 'other';

export interface ShownValue {
  kind: ValueKind;
  html: string;
  /** Extended JSON that equals this value (for "= this" links), when a link can carry it. */
  matchJson?: string;
  /** Whether ">"/"<" comparisons mean something for this value. */
  ordered: boolean;
}

/** Text longer than this is cut in cells (the row view shows all of it). */
export const CELL_TEXT_CHARS = 160;
/** Longer strings get no filter link: a URL is no place for them. */
const MAX_LINK_TEXT_CHARS = 256;

const GEO_TYPES = new Set(['Point', 'MultiPoint', 'LineString', 'MultiLineString', 'Polygon', 'MultiPolygon', 'GeometryCollection']);

/** The BSON class of a driver value (ObjectId, Decimal128, ...); undefined for plain objects, whatever keys they hold. */
export function bsonTag(value: object): string | undefined {
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto === Object.prototype || proto === null) return undefined;
  const tag = (value as { _bsontype?: unknown })._bsontype;
  return typeof tag === 'string' ? tag : undefined;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date) && bsonTag(value) === undefined;
}

/** A GeoJSON geometry: a known `type` with `coordinates` (or `geometries`). */
export function isGeoJson(value: unknown): value is { type: string; coordinates?: unknown; geometries?: unknown } {
  if (!isPlainObject(value) || typeof value.type !== 'string' || !GEO_TYPES.has(value.type)) return false;
  return Array.isArray(value.coordinates) || Array.isArray(value.geometries);
}

/** A coordinate: a number, or a number decoded as its BSON class (Double, Int32). */
function coordinate(value: unknown): number | undefined {
  if (typeof value === 'number') return value;
  if (typeof value !== 'object' || value === null) return undefined;
  const tag = bsonTag(value);
  return tag === 'Double' || tag === 'Int32' ? (value as { valueOf(): number }).valueOf() : undefined;
}

/** A point's longitude and latitude, when the value is a GeoJSON Point. */
export function pointOf(value: unknown): [number, number] | undefined {
  if (!isGeoJson(value) || value.type !== 'Point' || !Array.isArray(value.coordinates)) return undefined;
  const [lon, lat] = (value.coordinates as unknown[]).map(coordinate);
  return lon !== undefined && lat !== undefined ? [lon, lat] : undefined;
}

/** `2024-05-01 12:00:00 UTC`, or `2024-05-01` at midnight; milliseconds only when there are some. */
export function dateText(date: Date): string {
  if (Number.isNaN(date.getTime())) return 'invalid date';
  const iso = date.toISOString();
  if (iso.endsWith('T00:00:00.000Z')) return iso.slice(0, 10);
  return `${iso.slice(0, 10)} ${iso.slice(11, iso.endsWith('.000Z') ? 19 : 23)} UTC`;
}

const NARROW_SPACE = '\u202f';

/** Integers of five digits and more grouped by thousands; other numbers exactly as JSON writes them. */
export function numberText(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  if (Number.isInteger(n) && Math.abs(n) >= 10_000 && Math.abs(n) < 1e21) {
    return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, NARROW_SPACE);
  }
  return String(n);
}

/** Compact JSON of any value, cut at `chars`. */
export function previewJson(value: unknown, chars = CELL_TEXT_CHARS): string {
  let text: string;
  try {
    text = JSON.stringify(toPlainValue(value));
  } catch {
    return '(nested too deeply to show)';
  }
  return text.length > chars ? `${text.slice(0, chars)}…` : text;
}

function shortText(text: string): string {
  if (text.length <= CELL_TEXT_CHARS) return escapeHtml(text);
  return `${escapeHtml(text.slice(0, CELL_TEXT_CHARS))}… <small>(${numberText(text.length)} characters)</small>`;
}

const shown = (kind: ValueKind, html: string, ordered: boolean, matchJson?: string): ShownValue =>
  matchJson === undefined ? { kind, html, ordered } : { kind, html, ordered, matchJson };

/** The kind showValue gives a value, without writing its HTML (for profiling many values). */
export function kindOf(value: unknown): ValueKind {
  if (value === undefined) return 'missing';
  if (value === null) return 'null';
  switch (typeof value) {
    case 'boolean':
      return 'bool';
    case 'number':
    case 'bigint':
      return 'number';
    case 'string':
      return 'text';
    case 'object':
      break;
    default:
      return 'other';
  }
  if (value instanceof Date) return 'date';
  if (Array.isArray(value)) return 'array';
  switch (bsonTag(value)) {
    case 'ObjectId':
      return 'objectid';
    case 'Int32':
    case 'Double':
    case 'Long':
    case 'Decimal128':
      return 'number';
    case undefined:
      return isGeoJson(value) ? 'geo' : 'object';
    default:
      return 'other';
  }
}

/** BSON type names the schema tells apart (MongoDB's `$type` aliases, GeoJSON apart from other objects). */
export type StoredType =
  | 'missing'
  | 'null'
  | 'bool'
  | 'int'
  | 'long'
  | 'double'
  | 'decimal'
  | 'string'
  | 'date'
  | 'objectId'
  | 'geo'
  | 'array'
  | 'object'
  | 'other';

/**
 * The stored BSON type of a value decoded with its numbers as their BSON classes (a JavaScript
 * number, from a decoder that promotes them, is taken for a double when it has a fraction and
 * for an int otherwise: the best that can be told without the record's bytes).
 */
export function storedType(value: unknown): StoredType {
  if (typeof value === 'number') return Number.isInteger(value) ? 'int' : 'double';
  if (typeof value === 'bigint') return 'long';
  const kind = kindOf(value);
  switch (kind) {
    case 'text':
      return 'string';
    case 'objectid':
      return 'objectId';
    case 'number':
      switch (bsonTag(value as object)) {
        case 'Int32':
          return 'int';
        case 'Long':
          return 'long';
        case 'Decimal128':
          return 'decimal';
        default:
          return 'double';
      }
    default:
      return kind;
  }
}

/**
 * A text equal for two values exactly when they are the same value of the same kind, as far as a
 * reader tells them apart (an Int32 5 and a double 5 are one value; a Long 5 is another); objects
 * and arrays compared as their JSON, cut at `chars`.
 */
export function sameValueKey(value: unknown, chars = 400): string {
  switch (typeof value) {
    case 'number':
      return `n${value}`;
    case 'string':
      return `s${value}`;
    case 'boolean':
      return `b${value}`;
    case 'bigint':
      return `l${value}`;
    case 'undefined':
      return 'u';
    default:
      break;
  }
  if (value === null) return 'z';
  if (value instanceof Date) return `d${value.getTime()}`;
  const tag = bsonTag(value as object);
  if (tag === 'ObjectId') return `o${(value as { toHexString(): string }).toHexString()}`;
  if (tag === 'Int32' || tag === 'Double') return `n${(value as { valueOf(): number }).valueOf()}`;
  if (tag === 'Long' || tag === 'Decimal128') return `${tag}${String(value)}`;
  const point = pointOf(value);
  if (point !== undefined) return `p${point[0]},${point[1]}`;
  return `${kindOf(value)}:${previewJson(value, chars)}`;
}

export function showValue(value: unknown): ShownValue {
  if (value === undefined) return shown('missing', '', false);
  if (value === null) return shown('null', '<span class="nil">null</span>', false, 'null');
  switch (typeof value) {
    case 'boolean':
      return shown('bool', value ? 'true' : 'false', false, String(value));
    case 'number':
      return shown('number', escapeHtml(numberText(value)), true, Number.isFinite(value) ? JSON.stringify(value) : undefined);
    case 'bigint':
      return shown('number', escapeHtml(value.toString()), true, JSON.stringify({ $numberLong: value.toString() }));
    case 'string':
      return shown('text', shortText(value), true, value.length <= MAX_LINK_TEXT_CHARS ? JSON.stringify(value) : undefined);
    default:
      break;
  }
  if (value instanceof Date) {
    const valid = !Number.isNaN(value.getTime());
    const html = valid ? `<time datetime="${escapeHtml(value.toISOString())}">${escapeHtml(dateText(value))}</time>` : 'invalid date';
    return shown('date', html, valid, valid ? JSON.stringify({ $date: value.toISOString() }) : undefined);
  }
  if (Array.isArray(value)) {
    return shown('array', `<small>[${value.length}]</small> ${escapeHtml(previewJson(value))}`, false);
  }
  if (typeof value !== 'object') return shown('other', escapeHtml(String(value)), false);
  const tag = bsonTag(value);
  switch (tag) {
    case 'ObjectId': {
      const id = value as { toHexString(): string; getTimestamp(): Date };
      const hex = id.toHexString();
      const title = `created ${dateText(id.getTimestamp())}`;
      return shown('objectid', `<code title="${escapeHtml(title)}">${escapeHtml(hex)}</code>`, true, JSON.stringify({ $oid: hex }));
    }
    case 'Int32': {
      const n = (value as { valueOf(): number }).valueOf();
      return shown('number', escapeHtml(numberText(n)), true, JSON.stringify(n));
    }
    case 'Double': {
      // Written as every other format writes a double (`21.0`), so a whole one is not taken for an integer.
      const n = (value as { valueOf(): number }).valueOf();
      return shown('number', escapeHtml(doubleText(n)), true, Number.isFinite(n) ? JSON.stringify(n) : undefined);
    }
    case 'Long':
    case 'Decimal128': {
      const text = String(value);
      const key = tag === 'Long' ? '$numberLong' : '$numberDecimal';
      return shown('number', escapeHtml(text), true, JSON.stringify({ [key]: text }));
    }
    case undefined:
      break;
    default:
      return shown('other', `<small>${escapeHtml(tag)}</small> ${escapeHtml(previewJson(value))}`, false);
  }
  const point = pointOf(value);
  if (point !== undefined) {
    const [lon, lat] = point;
    const text = `${lat.toFixed(5)}, ${lon.toFixed(5)}`;
    return shown('geo', `<span class="geo" title="GeoJSON Point: latitude, longitude">◉ ${escapeHtml(text)}</span>`, false);
  }
  if (isGeoJson(value)) {
    const positions = JSON.stringify(value.coordinates ?? value.geometries ?? []).split('],[').length;
    return shown('geo', `<span class="geo">${escapeHtml(value.type)} · ${numberText(positions)} positions</span>`, false);
  }
  return shown('object', escapeHtml(previewJson(value)), false);
}
