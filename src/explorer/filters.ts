/**
 * The filter rows of a view (field, operator, value) and the MongoDB filter they make. A value is
 * read as (Extended) JSON when it parses as JSON (`357`, `"357"`, `{"$date": "2024-05-01T00:00:00Z"}`)
 * and as text otherwise (`Norman`), so typing reads naturally and a cell's "= this" link, which
 * writes the value as JSON, matches its exact type.
 */
import { isFieldPath } from './field-paths.js';
import { invalidView } from './errors.js';

export const FILTER_OPERATORS = {
  eq: { label: '=', build: (value: unknown): unknown => value },
  ne: { label: '≠', build: (value: unknown): unknown => ({ $ne: value }) },
  gt: { label: '>', build: (value: unknown): unknown => ({ $gt: value }) },
  gte: { label: '≥', build: (value: unknown): unknown => ({ $gte: value }) },
  lt: { label: '<', build: (value: unknown): unknown => ({ $lt: value }) },
  lte: { label: '≤', build: (value: unknown): unknown => ({ $lte: value }) },
  contains: { label: 'contains', build: (value: unknown): unknown => ({ $regex: escapeRegExp(String(value)), $options: 'i' }) },
  exists: { label: 'exists', build: (value: unknown): unknown => ({ $exists: value !== false && value !== 'false' && value !== 0 }) },
} as const;

export type FilterOperator = keyof typeof FILTER_OPERATORS;

export const isFilterOperator = (op: string): op is FilterOperator => Object.hasOwn(FILTER_OPERATORS, op);

export interface FilterRow {
  field: string;
  op: FilterOperator;
  /** As typed (or as a cell link wrote it): JSON when it parses, else text. */
  value: string;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The value of a row: its JSON when it is JSON, else the text itself. */
export function rowValue(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** The first instant of a calendar month in UTC (setUTCFullYear, unlike Date.UTC, keeps years 0-99 as they are). */
function utcMonthStart(year: number, month: number): Date {
  const start = new Date(0);
  start.setUTCFullYear(year, month, 1);
  return start;
}

/**
 * The rows of the calendar month holding `date` (in UTC, as the explorer shows dates): from that
 * month's first instant, up to the next month's. Equal-width histogram bins and a cell's strict
 * "> this" cannot give such a range by clicking. Undefined where the month would end past the
 * last date JavaScript can write.
 */
export function monthRows(field: string, date: Date): FilterRow[] | undefined {
  const from = utcMonthStart(date.getUTCFullYear(), date.getUTCMonth());
  const to = utcMonthStart(date.getUTCFullYear(), date.getUTCMonth() + 1);
  if (Number.isNaN(from.getTime()) || Number.isNaN(to.getTime())) return undefined;
  return [
    { field, op: 'gte', value: JSON.stringify({ $date: from.toISOString() }) },
    { field, op: 'lt', value: JSON.stringify({ $date: to.toISOString() }) },
  ];
}

/** One row's condition, `{field: condition}`. */
export function rowCondition(row: FilterRow): Record<string, unknown> {
  if (!isFieldPath(row.field)) throw invalidView(`"${row.field}" is not a field the explorer can filter by.`);
  return { [row.field]: FILTER_OPERATORS[row.op].build(rowValue(row.value)) };
}

/**
 * The filter of the rows and of the query typed as JSON (an object, or undefined for none),
 * as Extended JSON: every condition must hold.
 */
export function combinedFilter(rows: readonly FilterRow[], typed: Record<string, unknown> | undefined): Record<string, unknown> {
  const clauses = rows.map(rowCondition);
  if (typed !== undefined && Object.keys(typed).length > 0) clauses.push(typed);
  if (clauses.length === 0) return {};
  if (clauses.length === 1) return clauses[0] as Record<string, unknown>;
  return { $and: clauses };
}
