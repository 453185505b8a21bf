/**
 * A tab of the explorer's collection page: `read` gathers what the tab shows (through the
 * documents layer, with the caller's rights), `render` writes it as HTML from that alone. The
 * routes pick a tab's module from a map by the view's `tab`.
 */
import type { Html } from '../render/html-template.js';
import type { ExplorerReader, ExplorerReads } from './explorer-reads.js';
import type { ViewQuery } from './snippets.js';
import type { ExplorerView } from './view-state.js';

/** Records sampled for suggestions (facets, fields offered by the chart, map and summary). */
export const SUGGESTION_SAMPLE_SIZE = 300;

export interface ExplorerSettings {
  maxQueryBytes: number;
  explorerMap: { tileUrl: string | undefined; tileAttribution: string; limit: number };
}

/** What every tab is read with: the request's reader, the view and its query. */
export interface TabContext {
  reads: ExplorerReads;
  reader: ExplorerReader;
  /** The collection's explorer path (ends with "/"). */
  base: string;
  view: ExplorerView;
  /** The view's collection, filter, columns and sort. */
  query: ViewQuery;
  /** The filter, as pretty JSON. */
  filterJson: string;
  /** The service's URL as the request reached it (for the curl snippet). */
  baseUrl: string;
  /** Where the map's script reads the geometries. */
  geometriesPath: string;
  /** The request's CSP nonce, for the tabs that load scripts. */
  nonce: string | undefined;
  settings: ExplorerSettings;
}

export interface TabView<Model> {
  read(context: TabContext): Promise<Model>;
  render(model: Model): Html;
}
