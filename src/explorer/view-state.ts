/**
 * The state of an explorer view, carried whole by its URL so that a view is a link to share:
 *   tab=table|schema|chart|map|summary which view
 *   group (repeated, ≤ 2), measure  the summary's group fields and the number field it summarizes
 *   x, y                   the chart's fields
 *   geo                    the map's GeoJSON field
 *   f, op, v (repeated)    filter rows: field, operator, value (see filters.ts)
 *   q                      a filter typed as MongoDB JSON, combined with the rows
 *   sort                   `field` or `-field`
 *   col (repeated)         the chosen columns (none: the first columns found)
 *   facet (repeated)       fields whose top values are shown
 *   hist (repeated)        number or date fields shown as histograms
 *   page, size             paging
 *   fsize                  values shown per facet (10, 30, 100 or 300; a facet's "more" link)
 * Parsing refuses what the explorer cannot show (400); the filter's own checks run where the
 * documents layer parses the query built from it.
 */
import { isFieldPath } from './field-paths.js';
import { isFilterOperator, type FilterRow } from './filters.js';
import { invalidView } from './errors.js';

export const TABS = ['table', 'schema', 'chart', 'map', 'summary'] as const;
export type ExplorerTab = (typeof TABS)[number];

export interface SortOrder {
  field: string;
  direction: 1 | -1;
}

export interface ExplorerView {
  tab: ExplorerTab;
  rows: FilterRow[];
  /** The typed filter's JSON text ('' for none). */
  query: string;
  sort?: SortOrder;
  /** Chosen columns; empty: the first columns the page's records have. */
  columns: string[];
  facets: string[];
  histograms: string[];
  /** The chart's fields ('' for none chosen). */
  x: string;
  y: string;
  /** The field the chart's points are split by, one series per value ('' for none). */
  by: string;
  /** The map's GeoJSON field ('' for the first one found). */
  geo: string;
  /** The summary's group fields (at most two) and the number field summarized ('' for counts only). */
  groupBy: string[];
  measure: string;
  page: number;
  pageSize: number;
  /** Values shown per facet (FACET_SIZES). */
  facetSize: number;
}

export const DEFAULT_PAGE_SIZE = 25;
export const PAGE_SIZES = [10, 25, 50, 100] as const;
/** Values per facet: the first, and each "more" the next. */
export const FACET_SIZES = [10, 30, 100, 300] as const;
const MAX_ROWS = 20;
const MAX_FACETS = 8;
const MAX_COLUMNS = 200;
/** Deep pages skip every record before them; beyond this a filter or a sort is the way there. */
export const MAX_PAGE = 10_000;

type RawQuery = Record<string, unknown>;

/** Every value of a parameter, in order (the simple query parser gives a string or an array of them). */
function all(query: RawQuery, name: string): string[] {
  const value = query[name];
  if (value === undefined) return [];
  return (Array.isArray(value) ? value : [value]).map(String);
}

function one(query: RawQuery, name: string): string | undefined {
  const values = all(query, name);
  if (values.length > 1) throw invalidView(`The "${name}" parameter is given more than once.`);
  return values[0];
}

function positiveInt(raw: string | undefined, name: string, fallback: number, max: number): number {
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d{1,9}$/.test(raw) || Number(raw) < 1) throw invalidView(`"${name}" must be a whole number from 1.`);
  return Math.min(Number(raw), max);
}

function requireField(field: string, what: string): string {
  if (!isFieldPath(field)) throw invalidView(`${what} "${field.slice(0, 100)}" is not a field path (dotted keys, none starting with "$").`);
  return field;
}

function optionalField(raw: string | undefined, what: string): string {
  return raw === undefined || raw === '' ? '' : requireField(raw, what);
}

export function parseView(query: RawQuery): ExplorerView {
  const tabRaw = one(query, 'tab') ?? 'table';
  if (!(TABS as readonly string[]).includes(tabRaw)) throw invalidView(`"tab" is one of ${TABS.join(', ')}.`);
  const fields = all(query, 'f');
  const ops = all(query, 'op');
  const values = all(query, 'v');
  if (ops.length !== fields.length || values.length !== fields.length) {
    throw invalidView('Each filter row needs "f", "op" and "v" (the same number of each).');
  }
  const rows: FilterRow[] = [];
  fields.forEach((field, i) => {
    // An empty row (a blank line of the form) means nothing.
    if (field.trim() === '') return;
    const op = ops[i] as string;
    if (!isFilterOperator(op)) throw invalidView(`"${op.slice(0, 20)}" is not a filter operator.`);
    rows.push({ field: requireField(field.trim(), 'Filter field'), op, value: values[i] as string });
  });
  if (rows.length > MAX_ROWS) throw invalidView(`At most ${MAX_ROWS} filter rows.`);

  const sortRaw = one(query, 'sort');
  let sort: SortOrder | undefined;
  if (sortRaw !== undefined && sortRaw !== '') {
    const descending = sortRaw.startsWith('-');
    sort = { field: requireField(descending ? sortRaw.slice(1) : sortRaw, 'Sort field'), direction: descending ? -1 : 1 };
  }
  const columns = [...new Set(all(query, 'col').filter((c) => c !== ''))];
  if (columns.length > MAX_COLUMNS) throw invalidView(`At most ${MAX_COLUMNS} columns.`);
  const facets = [...new Set(all(query, 'facet').filter((f) => f !== ''))].map((f) => requireField(f, 'Facet field'));
  if (facets.length > MAX_FACETS) throw invalidView(`At most ${MAX_FACETS} facets.`);
  const histograms = [...new Set(all(query, 'hist').filter((f) => f !== ''))].map((f) => requireField(f, 'Histogram field'));
  if (histograms.length > MAX_FACETS) throw invalidView(`At most ${MAX_FACETS} histograms.`);
  const groupBy = [...new Set(all(query, 'group').filter((f) => f !== ''))].map((f) => requireField(f, 'Group field'));
  if (groupBy.length > 2) throw invalidView('At most two "group" fields.');
  const sizeRaw = positiveInt(one(query, 'size'), 'size', DEFAULT_PAGE_SIZE, 100);
  const pageSize = (PAGE_SIZES as readonly number[]).includes(sizeRaw) ? sizeRaw : DEFAULT_PAGE_SIZE;
  const facetSizeRaw = positiveInt(one(query, 'fsize'), 'fsize', FACET_SIZES[0], 1_000);
  const facetSize: number = FACET_SIZES.find((size) => size >= facetSizeRaw) ?? FACET_SIZES[3];
  return {
    tab: tabRaw as ExplorerTab,
    rows,
    query: one(query, 'q') ?? '',
    ...(sort === undefined ? {} : { sort }),
    columns,
    facets,
    histograms,
    x: optionalField(one(query, 'x'), 'Chart field'),
    y: optionalField(one(query, 'y'), 'Chart field'),
    by: optionalField(one(query, 'by'), 'Chart split field'),
    geo: optionalField(one(query, 'geo'), 'Map field'),
    groupBy,
    measure: optionalField(one(query, 'measure'), 'Summary field'),
    page: positiveInt(one(query, 'page'), 'page', 1, MAX_PAGE),
    pageSize,
    facetSize,
  };
}

/** The query string of a view (starting with "?", or '' for the default view), parameters in a fixed order. */
export function viewSearch(view: ExplorerView): string {
  const params = new URLSearchParams();
  if (view.tab !== 'table') params.set('tab', view.tab);
  for (const row of view.rows) {
    params.append('f', row.field);
    params.append('op', row.op);
    params.append('v', row.value);
  }
  if (view.query.trim() !== '') params.set('q', view.query);
  if (view.sort !== undefined) params.set('sort', `${view.sort.direction === -1 ? '-' : ''}${view.sort.field}`);
  for (const column of view.columns) params.append('col', column);
  for (const facet of view.facets) params.append('facet', facet);
  for (const field of view.histograms) params.append('hist', field);
  if (view.x !== '') params.set('x', view.x);
  if (view.y !== '') params.set('y', view.y);
  if (view.by !== '') params.set('by', view.by);
  if (view.geo !== '') params.set('geo', view.geo);
  for (const field of view.groupBy) params.append('group', field);
  if (view.measure !== '') params.set('measure', view.measure);
  if (view.page !== 1) params.set('page', String(view.page));
  if (view.pageSize !== DEFAULT_PAGE_SIZE) params.set('size', String(view.pageSize));
  if (view.facetSize !== FACET_SIZES[0]) params.set('fsize', String(view.facetSize));
  const search = params.toString();
  return search === '' ? '' : `?${search}`;
}

/** The same view with some changes; any change but paging itself goes back to the first page. */
export function withChanges(view: ExplorerView, changes: Partial<ExplorerView>): ExplorerView {
  return { ...view, page: 1, ...changes };
}
