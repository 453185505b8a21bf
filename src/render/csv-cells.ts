import { doubleText, nonFiniteCsv, nonFiniteValue } from './double-text.js';
import { plainJson } from './plain-json.js';
import { IntegralDouble, type PlainValue } from './types.js';

/**
 * How one record becomes CSV cells (docs/api-behaviour.md, "CSV and NDJSON"). Records arrive as
 * plain values (see toPlainValue): ObjectIds are already their 24 hex digits, dates ISO 8601 UTC,
 * decimals and binaries text. Here:
 * - nested objects become dotted columns (`loc.lat`), each key in a column name with its "." and
 *   "\\" escaped by a backslash (see columnName), so that a key `a.b` and a key `b` inside `a` are
 *   two columns, never one that keeps only one of their values;
 * - an object whose keys are Extended JSON operators (`{"$regex": ...}`, `{"$code": ...}`) and an
 *   empty object are one cell of JSON text;
 * - arrays are one cell of JSON text;
 * - null and missing values are empty cells, booleans `true`/`false`, numbers as JSON writes them
 *   (a whole double `3.0`, so that it reads back as a double); a double that is not finite
 *   `inf`, `-inf` or `nan`, as Python's float() and pandas read them;
 * - a record that is not an object (a distinct value) is one column, `value`.
 */

/** Column of a record that is not an object. */
export const VALUE_COLUMN = 'value';

type PlainObject = { [key: string]: PlainValue };

const isObject = (value: PlainValue | undefined): value is PlainObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof IntegralDouble);

/** Objects rendered as one cell rather than spread over dotted columns. */
function isLeafObject(value: PlainObject): boolean {
  const keys = Object.keys(value);
  return keys.length === 0 || keys.some((key) => key.startsWith('$'));
}

/** What a key's column name escapes: the path separator, and the escape character itself. */
const COLUMN_SPECIALS = /[.\\]/;

/** A key as it appears in a column name: `a.b` → `a\.b`, `a\b` → `a\\b`, any other key as it is. */
function columnName(key: string): string {
  return COLUMN_SPECIALS.test(key) ? key.replace(/[.\\]/g, '\\$&') : key;
}

/**
 * The keys a column name leads through, the inverse of joining columnName(key)s with ".":
 * `loc.lat` → ["loc", "lat"], `a\.b` → ["a.b"]. Undefined when a backslash escapes anything
 * other than "." or "\\" (or ends the name), which no column name holds.
 */
export function columnKeys(column: string): string[] | undefined {
  if (!column.includes('\\')) return column.split('.');
  const keys: string[] = [];
  let key = '';
  for (let i = 0; i < column.length; i += 1) {
    const char = column[i] as string;
    if (char === '.') {
      keys.push(key);
      key = '';
    } else if (char !== '\\') {
      key += char;
    } else {
      const escaped = column[i + 1];
      if (escaped !== '.' && escaped !== '\\') return undefined;
      key += escaped;
      i += 1;
    }
  }
  keys.push(key);
  return keys;
}

/** The text of one cell. */
export function cellText(value: PlainValue | undefined): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean' || typeof value === 'number') return String(value);
  if (value instanceof IntegralDouble) return doubleText(value.value);
  const nonFinite = nonFiniteValue(value);
  if (nonFinite !== undefined) return nonFiniteCsv(nonFinite);
  return plainJson(value);
}

/** The record's cells by column name (its leaf path, see columnName), in the record's key order. */
export function flattenRecord(record: PlainValue): Map<string, string> {
  const cells = new Map<string, string>();
  if (!isObject(record)) {
    cells.set(VALUE_COLUMN, cellText(record));
    return cells;
  }
  const walk = (object: PlainObject, prefix: string): void => {
    for (const [key, value] of Object.entries(object)) {
      const path = prefix + columnName(key);
      if (isObject(value) && !isLeafObject(value)) walk(value, `${path}.`);
      else cells.set(path, cellText(value));
    }
  };
  walk(record, '');
  return cells;
}

/**
 * The cell of `column` in a record: its leaf, or, for a column that names a sub-document
 * (`fields=loc`), that sub-document as JSON text.
 */
export function cellAt(record: PlainValue, cells: Map<string, string>, column: string): string {
  const leaf = cells.get(column);
  if (leaf !== undefined) return leaf;
  let value: PlainValue | undefined = record;
  for (const part of columnKeys(column) ?? []) {
    if (!isObject(value)) return '';
    value = value[part];
  }
  return cellText(value);
}

/** RFC 4180: a field with a comma, quote or line break is quoted, its quotes doubled. */
export function csvField(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function csvLine(fields: readonly string[]): string {
  return `${fields.map(csvField).join(',')}\r\n`;
}
