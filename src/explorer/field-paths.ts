/**
 * Column names and field paths. A column is a record's leaf named by its keys joined with "."
 * where a key's own "." or "\\" is escaped by a backslash (as CSV exports name columns), so a
 * key `a.b` and a key `b` inside `a` stay two columns. A column is addressable by MongoDB's query
 * language (sort, filter, facet) only when it is a plain dotted path: no key holds a ".", starts
 * with "$" or is empty.
 */

const COLUMN_SPECIALS = /[.\\]/g;

/** The column name of a key path: ["loc", "lat"] → `loc.lat`, ["a.b"] → `a\.b`. */
export function columnName(keys: readonly string[]): string {
  return keys.map((key) => key.replace(COLUMN_SPECIALS, '\\$&')).join('.');
}

/** The MongoDB field path of a key path, or undefined when the query language cannot name it. */
export function fieldPathOf(keys: readonly string[]): string | undefined {
  return keys.every(isPlainKey) ? keys.join('.') : undefined;
}

const isPlainKey = (key: string): boolean => key.length > 0 && !key.includes('.') && !key.startsWith('$') && !key.includes('\0');

export const MAX_FIELD_PATH_LENGTH = 1024;

/** Whether a field path from a URL is one the explorer sorts, filters or groups by. */
export function isFieldPath(path: string): boolean {
  return path.length > 0 && path.length <= MAX_FIELD_PATH_LENGTH && path.split('.').every(isPlainKey);
}
