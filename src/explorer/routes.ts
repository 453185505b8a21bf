/**
 * The data explorer, mounted at /api/explore:
 *   /:area/                 the area's databases the caller may see
 *   /:area/:db/             the database's collections the caller may see
 *   /:area/:db/:col/        the table (or, with tab=schema|chart|map, the schema, a chart or a map) of a collection's records
 *   /geometries/:area/:db/:col/  the GeoJSON geometries the map draws (JSON, for the map's script)
 *   /:area/:db/:col/:id/    one record, whole
 * `area` is data_store or catalog. Every read goes through the documents layer's service with
 * the caller's own principal, so the explorer shows exactly what the API would answer them (a
 * caller who may not read the collection gets the 401/403 page). Pages are HTML only; errors
 * render as the browsable page does (the geometries' errors as JSON).
 */
import { Router, type Request, type RequestHandler, type Response } from 'express';
import isPlainObject from 'is-plain-obj';
import type { Document } from 'mongodb';
import { requestBaseUrl } from '../http/base-url.js';
import { MOUNTS, urls } from '../http/urls.js';
import { methods } from '../http/methods.js';
import { pageContext, setRelatedPages } from '../http/respond.js';
import type { AreaName } from '../auth/permissions.js';
import type { DocumentArea } from '../documents/area.js';
import { DocumentService } from '../documents/document-service.js';
import { validateCollectionName, validateDatabaseName } from '../db/names.js';
import { parseQuery } from '../documents/query-params.js';
import { invalidView, queryRefusal } from './errors.js';
import { ExplorerReads, SCHEMA_SAMPLE_SIZE, withGeometry, type ExplorerReader, type FacetValue, type Total } from './explorer-reads.js';
import { combinedFilter } from './filters.js';
import { pageHtml, type Shell } from './page.js';
import { recordView } from './record-view.js';
import type { Histogram } from './histogram.js';
import { csvTypes, geometryFields, histogramKind, profileSample, suggestedFacets, suggestedHistograms } from './schema.js';
import { schemaView } from './schema-view.js';
import type { ViewQuery } from './snippets.js';
import { tableView } from './table-view.js';
import { chartView } from './chart-view.js';
import { chartSeries } from './chart-series.js';
import { mapView } from './map-view.js';
import { summaryPipeline, summaryView } from './summary-view.js';
import { mapData } from './map-data.js';
import { parseView, type ExplorerView } from './view-state.js';
import { html, type Html } from '../render/html-template.js';
import { exportsPanel } from './exports-panel.js';
import { filterPanel } from './filter-panel.js';
import { a, tabsHtml } from './view-html.js';

export const EXPLORE_ROOT = MOUNTS.explore;
/** Records sampled for suggested facets on the table view (the schema view samples SCHEMA_SAMPLE_SIZE). */
const SUGGESTION_SAMPLE_SIZE = 300;
/** Points drawn by the chart view, a random sample of the matching records. */
const CHART_SAMPLE_SIZE = 2_000;

export interface ExplorerDeps {
  settings: { maxQueryBytes: number; explorerMap: { tileUrl: string | undefined; tileAttribution: string; limit: number } };
  areas: { dataStore: DocumentArea; catalog: DocumentArea };
}

/** The explorer's path of a collection. */
export const explorePath = (area: AreaName, db: string, col: string): string => urls.explore(area, db, col);

/**
 * The geometries the map of a collection draws. Its own first segment keeps it apart from the
 * record pages (`/:area/:db/:col/:id/`), whose ids may be any word.
 */
export const geometriesPath = (area: AreaName, db: string, col: string): string =>
  `${EXPLORE_ROOT}/geometries/${area}/${encodeURIComponent(db)}/${encodeURIComponent(col)}/`;

/**
 * For the browsable page of a collection (`/api/<area>/data/:db/:col/`): a link to its explorer
 * view. Mounted ahead of the documents router for those paths; it only adds the link.
 */
export function exploreLink(area: AreaName): RequestHandler {
  return (req, res, next) => {
    if (req.method === 'GET' && req.format === 'api' && typeof req.params.db === 'string' && typeof req.params.col === 'string') {
      setRelatedPages(res, [{ name: 'Explore', href: explorePath(area, req.params.db, req.params.col) }]);
    }
    next();
  };
}

/** Whose share of heavy reads a request uses: the user's, or for anonymous callers the client address's. */
function callerKey(req: Request): string {
  const userId = req.principal?.userId;
  return userId ? `user:${userId}` : `ip:${req.ip ?? req.socket.remoteAddress ?? 'unknown'}`;
}

/** The typed filter of a view: a JSON object, as Extended JSON (revived when the query is parsed). */
function typedFilter(text: string): Record<string, unknown> | undefined {
  if (text.trim() === '') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw invalidView(`The MongoDB query is not valid JSON: ${(err as Error).message}`);
  }
  if (!isPlainObject(parsed)) throw invalidView('The MongoDB query must be a JSON object, such as {"elev": {"$gt": 300}}.');
  return parsed;
}

function send(
  req: Request,
  res: Response,
  status: number,
  shell: Omit<Shell, 'appTitle' | 'username' | 'nonce' | 'here'>,
  body: Html,
): void {
  const ctx = pageContext(req, res);
  const page = pageHtml(
    { ...shell, appTitle: ctx.title, username: ctx.user?.username ?? null, nonce: ctx.cspNonce, here: req.originalUrl },
    body,
  );
  res.status(status).type('html').send(page.text);
}

export function explorerRouter(deps: ExplorerDeps): Router {
  const readers = {
    data_store: new ExplorerReads(new DocumentService(deps.areas.dataStore)),
    catalog: new ExplorerReads(new DocumentService(deps.areas.catalog)),
  } as const;
  const router = Router({ strict: true });

  /** Errors of explorer pages render as HTML, whatever the browser's Accept said. */
  router.use((req, _res, next) => {
    req.format = 'api';
    next();
  });

  function areaOf(req: Request): AreaName {
    const area = req.params.area;
    if (area !== 'data_store' && area !== 'catalog') throw invalidView('The area is "data_store" or "catalog".');
    return area;
  }

  const listPage = (req: Request, res: Response, heading: string, crumbs: Shell['crumbs'], links: [string, string][]) =>
    send(
      req,
      res,
      200,
      { heading, crumbs },
      html`<ul class="listing" data-testid="listing">${links.map(([text, href]) => html`<li>${a(href, text)}</li>`)}</ul>\n${links.length === 0 && html`<p class="nil">Nothing here you may read.</p>\n`}`,
    );

  router.all(
    '/:area/',
    methods({
      GET: async (req, res) => {
        const area = areaOf(req);
        const names = await readers[area].documents.databaseNames(req.principal);
        listPage(
          req,
          res,
          area,
          [
            ['API', urls.root()],
            [area, null],
          ],
          names.map((db) => [db, `${EXPLORE_ROOT}/${area}/${encodeURIComponent(db)}/`]),
        );
      },
    }),
  );

  router.all(
    '/:area/:db/',
    methods({
      GET: async (req, res) => {
        const area = areaOf(req);
        const db = validateDatabaseName(req.params.db);
        const names = await readers[area].documents.collectionNames(req.principal, db);
        listPage(
          req,
          res,
          db,
          [
            ['API', urls.root()],
            [area, `${EXPLORE_ROOT}/${area}/`],
            [db, null],
          ],
          names.map((col) => [col, explorePath(area, db, col)]),
        );
      },
    }),
  );

  function resolve(req: Request): { area: AreaName; reads: ExplorerReads; reader: ExplorerReader; crumbs: Shell['crumbs'] } {
    const area = areaOf(req);
    const db = validateDatabaseName(req.params.db);
    const col = validateCollectionName(req.params.col);
    const reads = readers[area];
    const target = reads.target(req.principal, db, col);
    return {
      area,
      reads,
      reader: { principal: req.principal, caller: { key: callerKey(req), streamed: false }, target },
      crumbs: [
        ['API', urls.root()],
        [area, `${EXPLORE_ROOT}/${area}/`],
        [db, `${EXPLORE_ROOT}/${area}/${encodeURIComponent(db)}/`],
        [col, urls.records(area, db, col)],
      ],
    };
  }

  router.all(
    '/:area/:db/:col/',
    methods({
      GET: async (req, res) => {
        const { area, reads, reader, crumbs } = resolve(req);
        const { db, col } = reader.target;
        const base = explorePath(area, db, col);
        const view = parseView(req.query);
        const shell = { heading: `${db}.${col}`, crumbs: [...crumbs, ['explore', null] as [string, null]] };
        let filter: Record<string, unknown>;
        try {
          filter = combinedFilter(view.rows, typedFilter(view.query));
        } catch (err) {
          const refusal = queryRefusal(err);
          if (refusal === undefined) throw err;
          send(req, res, 400, shell, invalidViewBody(base, view, refusal));
          return;
        }
        const filterJson = JSON.stringify(filter, null, 2);
        const query = { area, db, col, filter, columns: view.columns, ...(view.sort === undefined ? {} : { sort: view.sort }) };
        try {
          const body =
            view.tab === 'schema'
              ? await schemaBody(reads, reader, base, view, filter, deps.settings.maxQueryBytes)
              : view.tab === 'chart'
                ? await chartBody(reads, reader, base, view, filter, deps.settings.maxQueryBytes, pageContext(req, res).cspNonce)
                : view.tab === 'summary'
                  ? await summaryBody(reads, reader, base, view, query, deps.settings.maxQueryBytes)
                  : view.tab === 'map'
                    ? await mapBody(
                        reads,
                        reader,
                        base,
                        geometriesPath(area, db, col),
                        view,
                        filter,
                        deps.settings,
                        pageContext(req, res).cspNonce,
                      )
                    : await tableBody(
                        reads,
                        reader,
                        base,
                        view,
                        query,
                        filterJson,
                        requestBaseUrl(req),
                        deps.settings.maxQueryBytes,
                        pageContext(req, res).cspNonce,
                      );
          // The chart and the map show the view's filter and downloads too, so what they draw can be changed and taken away there.
          const panels =
            view.tab === 'chart' || view.tab === 'map' || view.tab === 'summary'
              ? html`${filterPanel(base, view, filterJson, [])}${exportsPanel(query, requestBaseUrl(req))}`
              : undefined;
          send(req, res, 200, shell, html`${body}${panels}`);
        } catch (err) {
          // A query the documents layer refuses (an unknown operator, a bad value) is shown beside the filter to fix.
          const refusal = queryRefusal(err);
          if (refusal === undefined) throw err;
          send(req, res, 400, shell, invalidViewBody(base, view, refusal, filterJson));
        }
      },
    }),
  );

  router.all(
    '/geometries/:area/:db/:col/',
    methods({
      GET: async (req, res) => {
        req.format = 'json';
        const { reads, reader } = resolve(req);
        const view = parseView(req.query);
        if (view.geo === '') throw invalidView('"geo" names the field whose geometries to read.');
        const query = parseQuery(
          JSON.stringify({ filter: combinedFilter(view.rows, typedFilter(view.query)) }),
          deps.settings.maxQueryBytes,
        );
        const { limit } = deps.settings.explorerMap;
        const records = await reads.geometries(reader, query.filter, view.geo, limit);
        res.status(200).json(mapData(records, view.geo, limit));
      },
    }),
  );

  router.all(
    '/:area/:db/:col/:id/',
    methods({
      GET: async (req, res) => {
        const { area, reads, reader, crumbs } = resolve(req);
        const { db, col } = reader.target;
        const id = String(req.params.id);
        const record = await reads.documents.get(reader.target, id);
        const apiPath = urls.records(area, db, col, id);
        send(
          req,
          res,
          200,
          { heading: id, crumbs: [...crumbs, ['explore', explorePath(area, db, col)], [id, null]] },
          recordView(explorePath(area, db, col), apiPath, record),
        );
      },
    }),
  );
  return router;
}

/** A view whose filter was refused: the reason, and the filter to fix. */
function invalidViewBody(base: string, view: ExplorerView, message: string, filterJson = view.query): Html {
  return html`${tabsHtml(base, view)}<p class="hint" role="alert" data-testid="view-error">${message}</p>\n${filterPanel(base, { ...view, query: filterJson }, filterJson, [])}`;
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

async function tableBody(
  reads: ExplorerReads,
  reader: ExplorerReader,
  base: string,
  view: ExplorerView,
  viewQuery: ViewQuery,
  filterJson: string,
  baseUrl: string,
  maxQueryBytes: number,
  nonce: string | undefined,
): Promise<Html> {
  const started = performance.now();
  const sortIndexed = view.sort === undefined ? undefined : await reads.sortHasIndex(reader, view.sort.field);
  const query = parseQuery(JSON.stringify({ filter: viewQuery.filter, ...pageSort(view, sortIndexed) }), maxQueryBytes);
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
  return tableView({
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
  });
}

async function chartBody(
  reads: ExplorerReads,
  reader: ExplorerReader,
  base: string,
  view: ExplorerView,
  filter: Document,
  maxQueryBytes: number,
  nonce: string | undefined,
): Promise<Html> {
  const query = parseQuery(JSON.stringify({ filter }), maxQueryBytes);
  const profile = profileSample(await reads.sample(reader, query.filter, SUGGESTION_SAMPLE_SIZE));
  const fields = profile.fields.flatMap(({ column }) => (column.field === undefined || column.field === '_id' ? [] : [column.field]));
  const xFields = fields.filter((field) => histogramKind(profile, field) !== undefined);
  const yFields = fields.filter((field) => histogramKind(profile, field) === 'number');
  const xKind = view.x === '' ? undefined : (histogramKind(profile, view.x) ?? 'number');
  // Fields with a few repeated values split a chart best: offered first.
  const suggested = suggestedFacets(profile, []);
  const byFields = [...suggested, ...fields.filter((field) => !suggested.includes(field))];
  const fieldLists = { xFields, yFields, byFields };
  if (xKind === undefined || view.y === '') return chartView({ base, view, nonce, ...fieldLists });
  const points = await reads.points(reader, query.filter, view.x, xKind, view.y, CHART_SAMPLE_SIZE, view.by);
  const series = chartSeries(points, view.by !== '', view.y);
  return chartView({ base, view, nonce, ...fieldLists, chart: { xKind, series, sampleSize: CHART_SAMPLE_SIZE } });
}

async function summaryBody(
  reads: ExplorerReads,
  reader: ExplorerReader,
  base: string,
  view: ExplorerView,
  viewQuery: ViewQuery,
  maxQueryBytes: number,
): Promise<Html> {
  const query = parseQuery(JSON.stringify({ filter: viewQuery.filter }), maxQueryBytes);
  const profile = profileSample(await reads.sample(reader, query.filter, SUGGESTION_SAMPLE_SIZE));
  const fields = profile.fields.flatMap(({ column }) => (column.field === undefined || column.field === '_id' ? [] : [column.field]));
  const suggested = suggestedFacets(profile, []);
  const model = {
    base,
    view,
    query: viewQuery,
    groupFields: [...suggested, ...fields.filter((field) => !suggested.includes(field))],
    numberFields: fields.filter((field) => histogramKind(profile, field) === 'number'),
  };
  if (view.groupBy.length === 0) return summaryView(model);
  return summaryView({ ...model, rows: await reads.summarize(reader, query.filter, summaryPipeline(view.groupBy, view.measure)) });
}

async function mapBody(
  reads: ExplorerReads,
  reader: ExplorerReader,
  base: string,
  dataPath: string,
  view: ExplorerView,
  filter: Document,
  settings: ExplorerDeps['settings'],
  nonce: string | undefined,
): Promise<Html> {
  const query = parseQuery(JSON.stringify({ filter }), settings.maxQueryBytes);
  const profile = profileSample(await reads.sample(reader, query.filter, SUGGESTION_SAMPLE_SIZE));
  const found = geometryFields(profile);
  // A chosen field the sample happened to miss is still offered (and drawn).
  const geoFields = view.geo === '' || found.includes(view.geo) ? found : [view.geo, ...found];
  const field = view.geo === '' ? (geoFields[0] ?? '') : view.geo;
  const { tileUrl, tileAttribution, limit } = settings.explorerMap;
  const model = { base, dataPath, view, nonce, geoFields, field, limit, tiles: { url: tileUrl, attribution: tileAttribution } };
  if (field === '') return mapView(model);
  return mapView({ ...model, total: await reads.total(reader, withGeometry(query.filter, field), 0) });
}

async function schemaBody(
  reads: ExplorerReads,
  reader: ExplorerReader,
  base: string,
  view: ExplorerView,
  filter: Document,
  maxQueryBytes: number,
): Promise<Html> {
  const started = performance.now();
  const query = parseQuery(JSON.stringify({ filter }), maxQueryBytes);
  const sample = await reads.sample(reader, query.filter, SCHEMA_SAMPLE_SIZE);
  return schemaView(base, view, profileSample(sample), performance.now() - started);
}
