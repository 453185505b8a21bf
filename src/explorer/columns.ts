/**
 * Records as table rows: nested objects spread over dotted columns (`loc.lat`), down to a depth
 * where the rest is shown as one JSON preview; GeoJSON, arrays, empty objects and objects with
 * "$" keys are one cell each.
 */
import { columnName, fieldPathOf, isFieldPath } from './field-paths.js';
import { isGeoJson, isPlainObject } from './values.js';

/** Levels of nesting spread over columns; deeper objects are one cell. */
const MAX_SPREAD_DEPTH = 6;
/** Columns shown when none are chosen. */
export const DEFAULT_COLUMN_COUNT = 12;
/** Columns offered by the picker. */
const MAX_KNOWN_COLUMNS = 300;

export interface Column {
  name: string;
  /** The MongoDB field path, when the query language can name it (sort, filter, facet). */
  field?: string;
}

function spreads(value: unknown, depth: number): value is Record<string, unknown> {
  if (!isPlainObject(value) || depth >= MAX_SPREAD_DEPTH || isGeoJson(value)) return false;
  const keys = Object.keys(value);
  return keys.length > 0 && !keys.some((key) => key.startsWith('$'));
}

/** The record's cells by column name, in the record's key order. */
export function flattenRecord(record: Record<string, unknown>): Map<string, { column: Column; value: unknown }> {
  const cells = new Map<string, { column: Column; value: unknown }>();
  const walk = (object: Record<string, unknown>, keys: string[]): void => {
    for (const [key, value] of Object.entries(object)) {
      const path = [...keys, key];
      if (spreads(value, path.length)) {
        walk(value, path);
        continue;
      }
      const field = fieldPathOf(path);
      cells.set(columnName(path), { column: field === undefined ? { name: columnName(path) } : { name: columnName(path), field }, value });
    }
  };
  walk(record, []);
  return cells;
}

/** Every column of the records, in the order first met (`_id` first). */
export function knownColumns(rows: readonly Map<string, { column: Column }>[]): Column[] {
  const columns = new Map<string, Column>();
  for (const row of rows) {
    for (const { column } of row.values()) {
      if (columns.size >= MAX_KNOWN_COLUMNS) break;
      if (!columns.has(column.name)) columns.set(column.name, column);
    }
  }
  return [...columns.values()];
}

/** The chosen columns (those known first, then chosen ones no record on the page has), or the first few. */
export function shownColumns(known: readonly Column[], chosen: readonly string[]): Column[] {
  if (chosen.length === 0) return known.slice(0, DEFAULT_COLUMN_COUNT);
  const byName = new Map(known.map((column) => [column.name, column]));
  return chosen.map((name) => byName.get(name) ?? (isFieldPath(name) && !name.includes('\\') ? { name, field: name } : { name }));
}
