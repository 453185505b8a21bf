/**
 * The data explorer, mounted at /api/explore:
 *   /:area/                 the area's databases the caller may see
 *   /:area/:db/             the database's collections the caller may see
 *   /:area/:db/:col/        the table (or, with tab=schema|chart|map|summary, the schema, a chart, a map or a summary) of a
 *                           collection's records, each tab a view module (read + render) picked from TABS
 *   /geometries/:area/:db/:col/  the GeoJSON geometries the map draws (JSON, for the map's script)
 *   /:area/:db/:col/:id/    one record, whole
 * `area` is data_store or catalog. Every read goes through the documents layer's service with
 * the caller's own principal, so the explorer shows exactly what the API would answer them (a
 * caller who may not read the collection gets the 401/403 page). Pages are HTML only; errors
 * render as the browsable page does (the geometries' errors as JSON).
 */
import { Router, type Request, type RequestHandler, type Response } from 'express';
import isPlainObject from 'is-plain-obj';
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
import { ExplorerReads, type ExplorerReader } from './explorer-reads.js';
import { combinedFilter } from './filters.js';
import { pageHtml, type Shell } from './page.js';
import { recordView } from './record-view.js';
import { schemaTab } from './schema-view.js';
import { tableTab } from './table-view.js';
import { chartTab } from './chart-view.js';
import { mapTab } from './map-view.js';
import { summaryTab } from './summary-view.js';
import { mapData } from './map-data.js';
import type { ExplorerSettings, TabContext, TabView } from './tab-view.js';
import { parseView, type ExplorerTab, type ExplorerView } from './view-state.js';
import { html, type Html } from '../render/html-template.js';
import { exportsPanel } from './exports-panel.js';
import { filterPanel } from './filter-panel.js';
import { a, tabsHtml } from './view-html.js';

export const EXPLORE_ROOT = MOUNTS.explore;

/** Each tab's view module, by the view's `tab`. */
const TABS: { [Tab in ExplorerTab]: TabView<unknown> } = {
  table: tableTab,
  schema: schemaTab,
  chart: chartTab,
  map: mapTab,
  summary: summaryTab,
};

async function tabBody<Model>(tab: TabView<Model>, context: TabContext): Promise<Html> {
  return tab.render(await tab.read(context));
}

export interface ExplorerDeps {
  settings: ExplorerSettings;
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
          const context: TabContext = {
            reads,
            reader,
            base,
            view,
            query,
            filterJson,
            baseUrl: requestBaseUrl(req),
            geometriesPath: geometriesPath(area, db, col),
            nonce: pageContext(req, res).cspNonce,
            settings: deps.settings,
          };
          const body = await tabBody(TABS[view.tab], context);
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
