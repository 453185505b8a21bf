/**
 * The filter panel of a view: the rows (field, operator, value) as a GET form, and the MongoDB
 * filter they make as JSON, editable in a second form whose text replaces the rows.
 */
import { html, type Html } from '../render/html-template.js';
import { FILTER_OPERATORS, type FilterOperator } from './filters.js';
import { a, hiddenInputs, viewHref } from './view-html.js';
import { withChanges, type ExplorerView } from './view-state.js';
import type { FilterRow } from './filters.js';

export function operatorSelect(selected: FilterOperator): Html {
  const options = Object.entries(FILTER_OPERATORS).map(
    ([op, { label }]) => html`<option value="${op}"${op === selected && html` selected`}>${label}</option>`,
  );
  return html`<select name="op" aria-label="operator">${options}</select>`;
}

function rowHtml(row: FilterRow, removeHref: string | null): Html {
  const remove = removeHref === null ? undefined : a(removeHref, '✕ remove', html` data-testid="remove-row"`);
  return html`<div class="row" data-testid="filter-row"><input type="text" name="f" list="explorer-fields" placeholder="field" aria-label="field" value="${row.field}">${operatorSelect(row.op)}<input type="text" name="v" placeholder="value (JSON or text)" aria-label="value" value="${row.value}">${remove}</div>`;
}

export function filterPanel(base: string, view: ExplorerView, filterJson: string, fieldNames: readonly string[]): Html {
  const rows = view.rows.map((row, i) => rowHtml(row, viewHref(base, withChanges(view, { rows: view.rows.filter((_, j) => j !== i) }))));
  rows.push(rowHtml({ field: '', op: 'eq', value: '' }, null));
  const datalist = html`<datalist id="explorer-fields">${fieldNames.map((f) => html`<option value="${f}">`)}</datalist>`;
  return html`<section class="panel"><h2>Filter</h2><form class="rows" method="get" action="${base}" data-testid="filter-form">${hiddenInputs(view, ['rows'])}${rows}${datalist}<button type="submit">Apply</button></form><details${view.query.trim() !== '' && html` open`}><summary>MongoDB query</summary><form method="get" action="${base}" data-testid="query-form">${hiddenInputs(view, ['rows', 'query'])}<textarea name="q" rows="4" aria-label="MongoDB filter" data-testid="query-text">${filterJson}</textarea><button type="submit">Run query</button></form></details></section>\n`;
}
