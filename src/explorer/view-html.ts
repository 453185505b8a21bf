/** HTML pieces every explorer view shares: links to other views, hidden view inputs, the tabs. */
import { html, joinHtml, type Html, type HtmlValue } from '../render/html-template.js';
import { FACET_SIZES, viewSearch, withChanges, type ExplorerTab, type ExplorerView } from './view-state.js';

/** A link to `base` with the view's query string. */
export const viewHref = (base: string, view: ExplorerView): string => base + viewSearch(view);

/** A link; `attributes` (made by html`…`, so escaped) follow the href, with their leading space. */
export const a = (href: string, text: HtmlValue, attributes?: Html): Html => html`<a href="${href}"${attributes}>${text}</a>`;

type ViewPart = 'rows' | 'query' | 'sort' | 'columns' | 'facets' | 'histograms' | 'chart' | 'geo' | 'summary' | 'size' | 'tab';

/** The view as hidden inputs of a GET form, except the parts the form itself edits. */
export function hiddenInputs(view: ExplorerView, except: readonly ViewPart[]): Html {
  const out: Html[] = [];
  const input = (name: string, value: string) => out.push(html`<input type="hidden" name="${name}" value="${value}">`);
  if (!except.includes('tab') && view.tab !== 'table') input('tab', view.tab);
  if (!except.includes('rows')) {
    for (const row of view.rows) {
      input('f', row.field);
      input('op', row.op);
      input('v', row.value);
    }
  }
  if (!except.includes('query') && view.query.trim() !== '') input('q', view.query);
  if (!except.includes('sort') && view.sort !== undefined) input('sort', `${view.sort.direction === -1 ? '-' : ''}${view.sort.field}`);
  if (!except.includes('columns')) for (const column of view.columns) input('col', column);
  if (!except.includes('facets')) for (const facet of view.facets) input('facet', facet);
  if (!except.includes('histograms')) for (const field of view.histograms) input('hist', field);
  if (!except.includes('chart')) {
    if (view.x !== '') input('x', view.x);
    if (view.y !== '') input('y', view.y);
    if (view.by !== '') input('by', view.by);
  }
  if (!except.includes('geo') && view.geo !== '') input('geo', view.geo);
  if (!except.includes('summary')) {
    for (const field of view.groupBy) input('group', field);
    if (view.measure !== '') input('measure', view.measure);
  }
  if (!except.includes('size')) input('size', String(view.pageSize));
  if (!except.includes('facets') && view.facetSize !== FACET_SIZES[0]) input('fsize', String(view.facetSize));
  return joinHtml(out);
}

export function tabsHtml(base: string, view: ExplorerView): Html {
  const tab = (name: ExplorerTab, text: string) =>
    a(viewHref(base, withChanges(view, { tab: name })), text, view.tab === name ? html` class="on" aria-current="page"` : undefined);
  return html`<nav class="tabs" data-testid="tabs">${tab('table', 'Table')}${tab('schema', 'Schema')}${tab('chart', 'Chart')}${tab('map', 'Map')}${tab('summary', 'Summarize')}</nav>\n`;
}
