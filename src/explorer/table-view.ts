/**
 * The table view: filter panel, facets, the count and the time it took, the column picker, the
 * records as a table with sortable headers and per-cell filter links, paging, and exports.
 */
import { html, joinHtml, raw, type Html } from '../render/html-template.js';
import type { Document } from 'mongodb';
import { ColumnNames, flattenRecord, knownColumns, shownColumns, type Column } from './columns.js';
import { exportsPanel } from './exports-panel.js';
import type { FacetValue, Total } from './explorer-reads.js';
import { parseQuery } from '../documents/query-params.js';
import type { Histogram } from './histogram.js';
import { csvTypes, histogramKind, profileSample, suggestedFacets, suggestedHistograms } from './schema.js';
import { SUGGESTION_SAMPLE_SIZE, type TabView } from './tab-view.js';
import { facetPanel, type FacetPanelModel } from './facet-panel.js';
import { filterPanel, operatorSelect } from './filter-panel.js';
import { staticPath } from './static-files.js';
import { FILTER_OPERATORS, monthRows, type FilterOperator } from './filters.js';
import type { ViewQuery } from './snippets.js';
import { a, hiddenInputs, tabsHtml, viewHref } from './view-html.js';
import { withChanges, type ExplorerView } from './view-state.js';
import { kindOf, numberText, showValue, type ShownValue } from './values.js';

export interface TableModel {
  /** The explorer path of the collection (ends with "/"). */
  base: string;
  view: ExplorerView;
  records: readonly Document[];
  /** The columns of a sample of the view's records, offered beside those of the page. */
  sampleColumns: readonly Column[];
  total: Total;
  elapsedMs: number;
  /** The filter the view runs, as pretty JSON. */
  filterJson: string;
  /** Whether an index serves the sort (undefined: no sort). */
  sortIndexed: boolean | undefined;
  facets: FacetPanelModel;
  /** The request's CSP nonce, for the histograms' brush script (the only script a table page may load). */
  nonce: string | undefined;
  /** Field names for the filter and facet inputs' suggestions. */
  fieldNames: readonly string[];
  query: ViewQuery;
  baseUrl: string;
}

/** A record's `_id` as its row view's path segment (unencoded), when it can be written in a URL (an ObjectId or a string). */
export function recordIdSegment(id: unknown): string | undefined {
  const kind = kindOf(id);
  if (kind === 'objectid') return (id as { toHexString(): string }).toHexString();
  if (kind === 'text' && typeof id === 'string' && id.length <= 512 && !id.includes('/')) return id;
  return undefined;
}

/** A record's row view, when its `_id` can be written in a URL. */
function recordHref(base: string, id: unknown): string | undefined {
  const segment = recordIdSegment(id);
  return segment === undefined ? undefined : `${base}${encodeURIComponent(segment)}/`;
}

/** For a date: a link to the view narrowed to the date's calendar month (UTC), a range no other click gives. */
function monthLink(base: string, view: ExplorerView, field: string, value: unknown): Html | undefined {
  const rows = value instanceof Date ? monthRows(field, value) : undefined;
  if (rows === undefined) return undefined;
  return a(
    viewHref(base, withChanges(view, { rows: [...view.rows, ...rows] })),
    'month',
    html` title="this month (UTC)" data-testid="cell-month" rel="nofollow"`,
  );
}

function cellActions(base: string, view: ExplorerView, column: Column, value: unknown, shown: ShownValue): Html | undefined {
  if (column.field === undefined || shown.matchJson === undefined) return undefined;
  const field = column.field;
  const ops: FilterOperator[] = shown.ordered ? ['eq', 'ne', 'gt', 'lt'] : ['eq', 'ne'];
  const links = ops.map((op) =>
    a(
      viewHref(base, withChanges(view, { rows: [...view.rows, { field, op, value: shown.matchJson as string }] })),
      FILTER_OPERATORS[op].label,
      html` title="${op === 'eq' ? '= this' : op === 'ne' ? '≠ this' : `${FILTER_OPERATORS[op].label} this`}" data-testid="cell-${op}" rel="nofollow"`,
    ),
  );
  return html`<span class="acts">${links}${monthLink(base, view, field, value)}</span>`;
}

/**
 * A column's menu, a <details> that needs no script: sort up or down, facet, hide (unless the view
 * works on the field, which keeps it shown), and a filter on the field (operator and value).
 */
function columnMenu(base: string, view: ExplorerView, field: string, shown: readonly Column[], kept: readonly string[]): Html {
  const link = (changes: Partial<ExplorerView>, text: string, testId: string) =>
    a(viewHref(base, withChanges(view, changes)), text, html` data-testid="${testId}" rel="nofollow"`);
  const items = [
    link({ sort: { field, direction: 1 } }, 'Sort ↑', 'menu-sort-up'),
    link({ sort: { field, direction: -1 } }, 'Sort ↓', 'menu-sort-down'),
  ];
  if (!view.facets.includes(field)) items.push(link({ facets: [...view.facets, field], page: view.page }, 'Facet', 'menu-facet'));
  if (!kept.includes(field)) {
    const columns = shown.filter((column) => column.field !== field).map((column) => column.name);
    items.push(link({ columns, page: view.page }, 'Hide', 'menu-hide'));
  }
  const filter = html`<form method="get" action="${base}" data-testid="menu-filter">${hiddenInputs(view, [])}<input type="hidden" name="f" value="${field}">${operatorSelect('eq')}<input type="text" name="v" placeholder="value" aria-label="value"> <button type="submit">Filter</button></form>`;
  return html`<details class="colmenu" data-testid="column-menu"><summary title="Sort, facet, filter or hide">▾</summary><div class="menu">${joinHtml(items, ' · ')}${filter}</div></details>`;
}

function headerCell(base: string, view: ExplorerView, column: Column, shown: readonly Column[], kept: readonly string[]): Html {
  if (column.field === undefined) return html`<th title="${column.name} (not a field path MongoDB can sort by)">${column.name}</th>`;
  const current = view.sort?.field === column.field ? view.sort.direction : 0;
  const next = current === 1 ? -1 : 1;
  const arrow = current === 1 ? ' ▲' : current === -1 ? ' ▼' : '';
  const href = viewHref(base, withChanges(view, { sort: { field: column.field, direction: next } }));
  // Long names are cut short by the stylesheet; the whole name is the tooltip.
  return html`<th data-field="${column.field}" title="${column.name}">${a(href, column.name + arrow, html` class="sort" data-testid="sort-header" rel="nofollow"`)}${columnMenu(base, view, column.field, shown, kept)}</th>`;
}

function totalText(total: Total): string {
  if (total.exact) return `${numberText(total.n)} record${total.n === 1 ? '' : 's'}`;
  if (total.why === 'cap') return `more than ${numberText(total.n)} records`;
  if (total.why === 'slow') return `at least ${numberText(total.n)} records (counting all of them would take too long)`;
  return `at least ${numberText(total.n)} records (the count failed)`;
}

function columnPicker(base: string, view: ExplorerView, known: readonly Column[], shown: readonly Column[]): Html {
  const on = new Set(shown.map((c) => c.name));
  const boxes = known.map(
    (column) =>
      html`<label title="${column.name}"><input type="checkbox" name="col" value="${column.name}"${on.has(column.name) && html` checked`}> ${column.name}</label>`,
  );
  const all =
    view.columns.length > 0
      ? html` · ${a(viewHref(base, withChanges(view, { columns: [], page: view.page })), 'default columns')}`
      : undefined;
  return html`<details class="columns" data-testid="column-picker"><summary>Columns (${shown.length} of ${known.length} in this page and a sample of the view)</summary><form method="get" action="${base}">${hiddenInputs(view, ['columns'])}${boxes}<br><button type="submit">Show these columns</button>${all}</form></details>\n`;
}

function pagingNav(base: string, view: ExplorerView, shownRows: number, total: Total): Html {
  const last = total.exact ? Math.max(1, Math.ceil(total.n / view.pageSize)) : Number.POSITIVE_INFINITY;
  const hasNext = view.page < last && shownRows === view.pageSize;
  const prev =
    view.page > 1 ? a(viewHref(base, { ...view, page: view.page - 1 }), '« Previous', html` rel="prev"`) : html`<span>« Previous</span>`;
  const next = hasNext
    ? a(viewHref(base, { ...view, page: view.page + 1 }), 'Next »', html` rel="next" data-testid="next-page"`)
    : html`<span>Next »</span>`;
  const of = Number.isFinite(last) ? ` of ${numberText(last)}` : '';
  return html`<nav class="paging" aria-label="pages">${prev}<span>Page ${numberText(view.page)}${of}</span>${next}</nav>\n`;
}

/** The histograms' brush, loaded only when a histogram is drawn: every other table page has no script. */
function brushScript(model: TableModel): Html | undefined {
  const drawn = [...model.facets.histograms.values()].some((histogram) => typeof histogram !== 'string' && histogram.bins.length > 0);
  if (!drawn) return undefined;
  return html`<script src="${staticPath('histogram.js')}"${model.nonce !== undefined && html` nonce="${model.nonce}"`}></script>\n`;
}

/** The fields the view sorts, filters or facets by: always shown. */
function keptFields(view: ExplorerView): string[] {
  return [...(view.sort === undefined ? [] : [view.sort.field]), ...view.rows.map((row) => row.field), ...view.facets];
}

export function tableView(model: TableModel): Html {
  const { base, view, records } = model;
  // One set of column names for the page: its records mostly share their key paths.
  const names = new ColumnNames();
  const rows = records.map((record) => flattenRecord(record, names));
  const known = knownColumns(rows, model.sampleColumns);
  const kept = keptFields(view);
  const columns = shownColumns(known, view.columns, kept);
  const first = (view.page - 1) * view.pageSize;
  const summary =
    records.length === 0
      ? `No records on this page; ${totalText(model.total)} match.`
      : `${numberText(first + 1)}–${numberText(first + records.length)} of ${totalText(model.total)} · ${numberText(Math.round(model.elapsedMs))} ms`;
  const hint =
    model.sortIndexed === false && view.sort !== undefined
      ? html`<p class="hint" data-testid="sort-hint">No index starts with “${view.sort.field}”: this sort reads and sorts every matching record, which is slow on a large collection (an index on it helps).</p>`
      : undefined;
  const body = rows.map((cells, i) => {
    const record = records[i] as Document;
    const href = recordHref(base, record._id);
    const tds = columns.map((column) => {
      const cell = cells.get(column.name);
      const shown = showValue(cell?.value);
      // The value's HTML is written by showValue, which escapes what it shows.
      const value = raw(shown.html);
      const content = column.name === '_id' && href !== undefined ? html`<a href="${href}" data-testid="row-link">${value}</a>` : value;
      return html`<td class="${shown.kind}">${content}${cellActions(base, view, column, cell?.value, shown)}</td>`;
    });
    return html`<tr data-testid="record-row">${tds}</tr>`;
  });
  return html`${tabsHtml(base, view)}${filterPanel(base, view, model.filterJson, model.fieldNames)}${facetPanel(base, view, model.facets)}<p class="summary" data-testid="summary">${summary}</p>\n${hint}${columnPicker(base, view, known, columns)}<div class="scroll"><table class="records" data-testid="records"><thead><tr>${columns.map((c) => headerCell(base, view, c, columns, kept))}</tr></thead><tbody>${joinHtml(body, '\n')}</tbody></table></div>\n${pagingNav(base, view, records.length, model.total)}${exportsPanel(model.query, model.baseUrl)}${brushScript(model)}`;
}

/**
 * The page's sort. A sort no index serves sorts every match anyway, so `_id` breaks its ties at
 * little cost and pages never repeat or skip a record; an indexed sort is left as it is, since a
 * second key the index does not hold would make the engine sort every match instead.
 */
function pageSort(view: ExplorerView, indexed: boolean | undefined): { sort?: Record<string, 1 | -1> } {
  if (view.sort === undefined) return {};
  const { field, direction } = view.sort;
  return { sort: indexed === true || field === '_id' ? { [field]: direction } : { [field]: direction, _id: 1 } };
}

export const tableTab: TabView<TableModel> = {
  async read({ reads, reader, base, view, query: viewQuery, filterJson, baseUrl, nonce, settings }) {
    const started = performance.now();
    const sortIndexed = view.sort === undefined ? undefined : await reads.sortHasIndex(reader, view.sort.field);
    const query = parseQuery(JSON.stringify({ filter: viewQuery.filter, ...pageSort(view, sortIndexed) }), settings.maxQueryBytes);
    const skip = (view.page - 1) * view.pageSize;
    const sort = view.sort;
    // Up, records without the field would come first (MongoDB sorts missing below every value): they go last, as they do down.
    const reading =
      sort !== undefined && sort.direction === 1 && sort.field !== '_id' && query.sort !== undefined
        ? reads.pageMissingLast(reader, { ...query, sort: query.sort }, sort.field, skip, view.pageSize)
        : reads.page(reader, query, skip, view.pageSize);
    const [records, counted] = await Promise.all([reading, reads.total(reader, query.filter, 0)]);
    const elapsedMs = performance.now() - started;
    const seen = skip + records.length;
    const total: Total = counted.exact ? counted : { ...counted, n: Math.max(counted.n, seen) };
    const facets: Map<string, FacetValue[]> =
      view.facets.length > 0 ? await reads.facets(reader, query.filter, view.facets, view.facetSize) : new Map();
    const sample = await reads.sample(reader, query.filter, SUGGESTION_SAMPLE_SIZE);
    const profile = profileSample(sample);
    const histograms = new Map<string, Histogram | string>();
    for (const field of view.histograms) {
      const kind = histogramKind(profile, field);
      histograms.set(
        field,
        kind === undefined ? 'No numbers or dates in a sample of this field.' : await reads.histogram(reader, query.filter, field, kind),
      );
    }
    const fieldNames = profile.fields.flatMap(({ column }) => (column.field === undefined ? [] : [column.field]));
    return {
      base,
      view,
      records,
      sampleColumns: profile.fields.map(({ column }) => column),
      total,
      elapsedMs,
      filterJson,
      sortIndexed,
      facets: {
        facets,
        histograms,
        suggested: suggestedFacets(profile, view.facets),
        suggestedHistograms: suggestedHistograms(profile, view.histograms),
      },
      fieldNames,
      query: { ...viewQuery, types: csvTypes(profile) },
      baseUrl,
      nonce,
    };
  },
  render: tableView,
};
