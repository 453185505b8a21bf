/**
 * The service's URL map, in one place: where each feature's declared routes are mounted, which
 * of them the API root lists, and the routes that are pages for people rather than API (left out
 * of the OpenAPI document). app.ts mounts from it; the API root (root.ts) and the OpenAPI
 * document (openapi.ts) are made from what it mounted. test/integration/app/route-table.test.ts
 * walks the mounted app and fails on any route that is neither in the document nor a page here.
 */
import type { Mount, RouteDecl, Verb } from '../http/route-table.js';
import { MOUNTS } from '../http/urls.js';
import type { AreaName } from '../auth/permissions.js';
import { AUTH_ROUTES } from '../auth/routes/route-table.js';
import { CLIENT_ROUTES } from '../client-downloads/routes.js';
import { documentRoutes, indexRoutes } from '../documents/route-table.js';
import { LINK_ROUTES } from '../links/routes.js';
import { METRICS_ROUTES } from '../metrics/routes.js';
import { QUEUE_ROUTES } from '../queue/api/route-table.js';
import { ADMIN_ROOT } from '../admin/index.js';
import { EXPLORE_ROOT } from '../explorer/routes.js';
import { EXPLORE_STATIC_ROOT } from '../explorer/static-files.js';
import { FAVICON_PATH } from '../explorer/favicon.js';
import { MANUAL_ROOT } from '../manual/routes.js';
import { BROWSABLE_STATIC_ROOT } from '../render/html-script.js';
import { HEALTH_ROUTES } from './health.js';
import { SCHEMA_ROUTES } from './openapi.js';
import { ROOT_ROUTES } from './root.js';

const mount = <R extends Record<string, RouteDecl>>(prefix: string, routes: R): Mount & { at: R } => ({
  prefix,
  routes: Object.values(routes),
  at: routes,
});

interface Area {
  name: AreaName;
  canCreateDatabases: boolean;
}

/** Every API mount; the document areas' routes depend on what each area allows. */
export function apiMounts(areas: { dataStore: Area; catalog: Area }) {
  return {
    root: mount(MOUNTS.api, ROOT_ROUTES),
    health: mount(MOUNTS.health, HEALTH_ROUTES),
    schema: mount(MOUNTS.schema, SCHEMA_ROUTES),
    metrics: mount(MOUNTS.metrics, METRICS_ROUTES),
    client: mount(MOUNTS.client, CLIENT_ROUTES),
    auth: mount(MOUNTS.api, AUTH_ROUTES),
    links: mount(MOUNTS.links, LINK_ROUTES),
    dataStore: mount(MOUNTS.records.data_store, { ...documentRoutes(areas.dataStore) }),
    catalog: mount(MOUNTS.records.catalog, { ...documentRoutes(areas.catalog) }),
    dataStoreIndexes: mount(MOUNTS.indexes.data_store, { ...indexRoutes(areas.dataStore.name) }),
    catalogIndexes: mount(MOUNTS.indexes.catalog, { ...indexRoutes(areas.catalog.name) }),
    queue: mount(MOUNTS.queue, QUEUE_ROUTES),
  };
}

export type ApiMounts = ReturnType<typeof apiMounts>;

/** The full express pattern of one of a mount's routes. */
export const fullPath = (m: Mount, decl: RouteDecl): string => m.prefix + decl.path;

/** What the API root lists, in this order: each name with the mount and route it points at. */
export function rootLinks(m: ApiMounts): [name: string, path: string][] {
  return [
    ['queue', fullPath(m.queue, m.queue.at.tasks)],
    ['user tasks', fullPath(m.queue, m.queue.at.history)],
    ['catalog', fullPath(m.catalog, m.catalog.at.databases)],
    ['data store', fullPath(m.dataStore, m.dataStore.at.databases)],
    ['user profile', fullPath(m.auth, m.auth.at.profile)],
    ['schema', fullPath(m.schema, m.schema.at.schema)],
    ['health', fullPath(m.health, m.health.at.health)],
    ['manual', `${PAGES.manual.path}/`],
  ];
}

/**
 * Routes for people's browsers, not the API: HTML pages, their scripts and styles, redirects.
 * They are not in the OpenAPI document. `tree`: everything under the path is the page's own
 * (the explorer's geometries are JSON, but only for the explorer's map script).
 */
export interface Page {
  readonly path: string;
  readonly methods: readonly Verb[];
  readonly tree?: true;
  readonly what: string;
}

export const PAGES = {
  home: { path: '/', methods: ['GET'], what: 'redirects to the API root' },
  favicon: { path: FAVICON_PATH, methods: ['GET'], what: "the service's icon" },
  browsableStatic: { path: BROWSABLE_STATIC_ROOT, methods: ['GET'], tree: true, what: "the browsable page's script" },
  explorerStatic: { path: EXPLORE_STATIC_ROOT, methods: ['GET'], tree: true, what: "the explorer's scripts and styles" },
  admin: {
    path: ADMIN_ROOT,
    methods: ['GET', 'POST'],
    tree: true,
    what: 'the administration site (AdminJS) with its Operations and Indexes pages and their endpoints',
  },
  explorer: { path: EXPLORE_ROOT, methods: ['GET'], tree: true, what: "the data explorer's pages and its map's geometries" },
  manual: { path: MANUAL_ROOT, methods: ['GET'], tree: true, what: "the service's own manual (the built documentation site)" },
} as const satisfies Record<string, Page>;
