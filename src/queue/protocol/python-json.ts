/**
 * JSON text the way Python's `json.dumps` (and so kombu's JSON serializer) writes it:
 * `", "` and `": "` separators and `ensure_ascii` escapes. Python readers accept any JSON, but
 * writing the same text keeps result documents indistinguishable from those a Python worker
 * stores, which makes comparisons and debugging across the two worlds straightforward.
 */
import type { JsonValue } from './json.js';

export function pythonJsonDumps(value: unknown): string {
  return dump(toJsonValue(value));
}

/**
 * Converts what a task may return into a JSON value. Dates become ISO strings with `Z`, the way
 * kombu 5.2.4 encodes aware UTC datetimes; `undefined` becomes null (Python has no such value).
 */
export function toJsonValue(value: unknown, seen: Set<unknown> = new Set()): JsonValue {
  if (value === null || value === undefined) return null;
  switch (typeof value) {
    case 'boolean':
    case 'string':
      return value;
    case 'number':
      // Python's json module writes NaN/Infinity, which strict JSON readers refuse; null is safer.
      return Number.isFinite(value) ? value : null;
    case 'bigint':
      return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
    case 'object':
      break;
    default:
      throw new TypeError(`Object of type ${typeof value} is not JSON serializable`);
  }
  if (value instanceof Date) return value.toISOString().replace(/\.000Z$/, 'Z');
  if (seen.has(value)) throw new TypeError('Circular reference detected');
  seen.add(value);
  try {
    if (Array.isArray(value)) return value.map((item) => toJsonValue(item, seen));
    if (typeof (value as { toJSON?: unknown }).toJSON === 'function') {
      return toJsonValue((value as { toJSON: () => unknown }).toJSON(), seen);
    }
    if (value instanceof Map) {
      return Object.fromEntries([...value].map(([k, v]) => [String(k), toJsonValue(v, seen)]));
    }
    if (value instanceof Set) return [...value].map((item) => toJsonValue(item, seen));
    const out: { [key: string]: JsonValue } = {};
    for (const [key, item] of Object.entries(value)) {
      if (item === undefined || typeof item === 'function' || typeof item === 'symbol') continue;
      out[key] = toJsonValue(item, seen);
    }
    return out;
  } finally {
    seen.delete(value);
  }
}

function dump(value: JsonValue): string {
  if (value === null) return 'null';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') return JSON.stringify(value);
  if (typeof value === 'string') return asciiString(value);
  if (Array.isArray(value)) return `[${value.map(dump).join(', ')}]`;
  return `{${Object.entries(value)
    .map(([key, item]) => `${asciiString(key)}: ${dump(item)}`)
    .join(', ')}}`;
}

/** JSON string literal with every non-ASCII code unit escaped, as `ensure_ascii=True` does. */
function asciiString(text: string): string {
  return JSON.stringify(text).replace(/[\u0080-\uffff]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
