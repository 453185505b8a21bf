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

/** A column met under a key path, with the columns met below it (made once per path, not per cell). */
interface ColumnNode {
  column: Column;
  keys: readonly string[];
  children?: Map<string, ColumnNode>;
}

/**
 * The columns of key paths already met. Records of one collection mostly share their paths, so
 * walking many records with one ColumnNames names each path once.
 */
export class ColumnNames {
  private readonly root: ColumnNode = { column: { name: '' }, keys: [] };

  child(parent: ColumnNode | undefined, key: string): ColumnNode {
    const node = parent ?? this.root;
    node.children ??= new Map();
    let found = node.children.get(key);
    if (found === undefined) {
      const keys = [...node.keys, key];
      const name = columnName(keys);
      const field = fieldPathOf(keys);
      found = { column: field === undefined ? { name } : { name, field }, keys };
      node.children.set(key, found);
    }
    return found;
  }
}

/** Calls `visit` for each cell of the record, in the record's key order. */
export function forEachCell(
  record: Record<string, unknown>,
  visit: (column: Column, value: unknown) => void,
  names: ColumnNames = new ColumnNames(),
): void {
  const walk = (object: Record<string, unknown>, parent: ColumnNode | undefined, depth: number): void => {
    for (const key in object) {
      if (!Object.hasOwn(object, key)) continue;
      const value = object[key];
      const node = names.child(parent, key);
      if (spreads(value, depth + 1)) walk(value, node, depth + 1);
      else visit(node.column, value);
    }
  };
  walk(record, undefined, 0);
}

/** The record's cells by column name, in the record's key order. */
export function flattenRecord(record: Record<string, unknown>, names?: ColumnNames): Map<string, { column: Column; value: unknown }> {
  const cells = new Map<string, { column: Column; value: unknown }>();
  forEachCell(record, (column, value) => cells.set(column.name, { column, value }), names);
  return cells;
}

/** Every column of the records, in the order first met (`_id` first), then those only `more` has (a sample's). */
export function knownColumns(rows: readonly Map<string, { column: Column }>[], more: readonly Column[] = []): Column[] {
  const columns = new Map<string, Column>();
  const add = (column: Column) => {
    if (columns.size < MAX_KNOWN_COLUMNS && !columns.has(column.name)) columns.set(column.name, column);
  };
  for (const row of rows) for (const { column } of row.values()) add(column);
  for (const column of more) add(column);
  return [...columns.values()];
}

/** The column of a name: the known one, or for a field path no known record has, that path. */
function columnOf(byName: ReadonlyMap<string, Column>, name: string): Column {
  return byName.get(name) ?? (isFieldPath(name) && !name.includes('\\') ? { name, field: name } : { name });
}

/**
 * The chosen columns, or the first few known; either way followed by the `kept` fields (the view
 * sorts, filters or facets by them) not among them, so that a column the view works on never
 * goes missing because the records on the page happen to lack it.
 */
export function shownColumns(known: readonly Column[], chosen: readonly string[], kept: readonly string[] = []): Column[] {
  const byName = new Map(known.map((column) => [column.name, column]));
  const shown = chosen.length === 0 ? known.slice(0, DEFAULT_COLUMN_COUNT) : chosen.map((name) => columnOf(byName, name));
  const has = new Set(shown.flatMap((column) => [column.name, ...(column.field === undefined ? [] : [column.field])]));
  for (const field of kept) {
    if (has.has(field)) continue;
    has.add(field);
    shown.push(known.find((column) => column.field === field) ?? columnOf(byName, field));
  }
  return shown;
}
