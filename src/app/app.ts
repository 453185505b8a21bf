/**
 * Assembles the express application. Order matters and is the architecture:
 * request id → allowed hosts → security headers → format → compression → (browsable-page script, admin site) →
 * canonical slash → session → authentication → CSRF → body gate → routes (each reads its body with the
 * parser its declaration names, then checks its query and body) → JSON body of any other path → 404 →
 * error mapping.
 *
 * The admin site (src/admin) brings its own session/authentication step, its own CSRF check and
 * its own form parsing, and its URLs have no trailing-slash rule, hence its early place.
 *
 * Every path comes from the route table (route-table.ts): `mount` places a feature's router at its
 * table entry and remembers it, and the API root and the OpenAPI document are made from that.
 */
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { type Express, type RequestHandler, type Router } from 'express';
import { registeredTaskNames, type ServiceContext } from './service-context.js';
import { allowedHosts } from '../http/allowed-hosts.js';
import { jsonBody, setBodyLimit } from '../http/body.js';
import { errorHandler, notFoundHandler } from './error-handler.js';
import { negotiateFormat } from '../http/format.js';
import { compression } from '../http/compression.js';
import { chain } from '../http/chain.js';
import { requestLog } from '../http/request-log.js';
import type { RespondOptions } from '../http/respond.js';
import { securityHeaders, tileOrigin } from '../http/security-headers.js';
import { adminSite, type AdminSiteOptions } from '../admin/index.js';
import { AdminProcess } from '../admin/process/admin-process.js';
import { browsableStatic } from '../render/html-script.js';
import { canonicalTrailingSlash } from '../http/trailing-slash.js';
import { ANONYMOUS } from '../auth/principal.js';
import { rootRouter } from './root.js';
import { documentsRouter } from '../documents/routes.js';
import { indexesRouter } from '../documents/index-routes.js';
import { queueRouter, submissionRefusal } from '../queue/api/routes.js';
import { writeRefusal } from '../documents/guards.js';
import { bodyGate, servedBy } from './body-gate.js';
import { healthRouter } from './health.js';
import { expressTrustProxy } from '../config/trusted-proxy.js';
import { clientDownloadsRouter } from '../client-downloads/routes.js';
import { schemaRouter } from './openapi.js';
import { PAGES, apiMounts, fullPath, rootLinks } from './route-table.js';
import type { Mount } from '../http/route-table.js';
import { httpMetrics, recordRouteTemplates } from '../metrics/http-metrics.js';
import { metricsRouter } from '../metrics/routes.js';
import { linkAuthentication, linksRouter, type LinkDeps } from '../links/routes.js';
import { canAccessCollection } from '../auth/permissions.js';
import { exploreLink, explorerRouter } from '../explorer/routes.js';
import { explorerStatic } from '../explorer/static-files.js';
import { favicon } from '../explorer/favicon.js';
import { manualRouter } from '../manual/routes.js';
import './request-context.js';

export interface ExtraRouters {
  /** The admin site at /api/admin (on unless `false`); set up on its first request. */
  admin?: AdminSiteOptions | false;
  /**
   * The environment the settings were loaded from. With it, and ADMIN_PROCESS=separate, the
   * admin site's AdminJS pages are made in a process of their own that loads the same settings;
   * without it they are made in this process.
   */
  settingsEnv?: Record<string, string | undefined>;
  /** Mounted before the session and the body parsers. */
  beforeBody?: { path: string; router: Router }[];
  /** Mounted under /api after authentication. */
  api?: { path: string; router: Router }[];
}

/** The admin process's entry: this folder's admin-child, as TypeScript or as built JavaScript. */
const ADMIN_PROCESS_ENTRY = new URL(`./admin-child${extname(fileURLToPath(import.meta.url))}`, import.meta.url);

const closers = new WeakMap<Express, (() => Promise<void>)[]>();

function onAppClose(app: Express, close: () => Promise<void>): void {
  closers.set(app, [...(closers.get(app) ?? []), close]);
}

/** Stops what the application started besides its routes (the admin process). */
export async function closeApp(app: Express): Promise<void> {
  await Promise.all((closers.get(app) ?? []).map((close) => close()));
}

export function createApp(ctx: ServiceContext, extra: ExtraRouters = {}): Express {
  const { settings, logger } = ctx;
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  app.set('trust proxy', expressTrustProxy(settings.trustProxy));
  app.set('json spaces', 0);
  setBodyLimit(app, settings.maxBodyBytes);
  const m = apiMounts(ctx.documents);
  const mounted: Mount[] = [];
  const mount = (at: Mount, ...handlers: RequestHandler[]) => {
    app.use(at.prefix, ...handlers);
    mounted.push(at);
  };

  const pageOptions: RespondOptions = Object.freeze({
    title: settings.applicationTitle,
    sendTimeoutMs: settings.streamSendTimeoutSeconds * 1000,
  });
  // Every request's own steps, in this order, as one layer (src/http/chain.ts): express walks one
  // layer for them instead of seven.
  const everyRequest: RequestHandler[] = [
    (req, res, next) => {
      req.principal = ANONYMOUS;
      res.locals.pageOptions = pageOptions;
      next();
    },
  ];
  if (ctx.metrics !== undefined) {
    recordRouteTemplates(app);
    everyRequest.push(httpMetrics(ctx.metrics.core.httpDuration));
  }
  everyRequest.push(
    requestLog(logger),
    allowedHosts(settings.allowedHosts),
    // HSTS only where this process itself terminates TLS (behind a proxy, the proxy decides).
    ...securityHeaders({
      https: settings.https !== undefined,
      imageOrigins: settings.explorerMap.tileUrl === undefined ? [] : [tileOrigin(settings.explorerMap.tileUrl)],
    }),
    negotiateFormat(),
    // Answers that carry a CSRF token or a credential (the login forms, the profile with its token, the admin site) are never compressed (BREACH).
    compression({ except: [...Object.values(m.auth.at).map((r) => fullPath(m.auth, r)), PAGES.admin.path] }),
  );
  app.use(chain(everyRequest));
  app.use(PAGES.browsableStatic.path, browsableStatic());
  app.get(PAGES.favicon.path, favicon);
  app.use(PAGES.explorerStatic.path, explorerStatic());
  if (extra.admin !== false) {
    const separate =
      extra.settingsEnv !== undefined && settings.adminProcess.mode === 'separate'
        ? new AdminProcess({ entry: ADMIN_PROCESS_ENTRY, env: extra.settingsEnv, idleExitMs: settings.adminProcess.idleExitMs, logger })
        : undefined;
    if (separate !== undefined) onAppClose(app, () => separate.close());
    const taskNames = () => registeredTaskNames(ctx);
    app.use(PAGES.admin.path, adminSite(ctx, { taskNames, bundleDir: settings.adminBundleDir, separate, ...extra.admin }));
  }
  // Ahead of the trailing-slash redirect: scrapers ask for the literal path they were given.
  // Only the authentication steps run, as for a GET under /api (no body, no CSRF for GET).
  if (ctx.metrics !== undefined) {
    mount(m.metrics, ctx.auth.session, ctx.auth.authenticate, metricsRouter(ctx.metrics, ctx.metrics.allowList));
  }
  mount(m.client, clientDownloadsRouter(settings.clientDownloadsDir, m.client.prefix));
  app.use(PAGES.manual.path, manualRouter(settings.manualDir));
  app.use(canonicalTrailingSlash('/api'));
  const links: LinkDeps = {
    secretKey: settings.secretKey,
    linkHolder: (id) => ctx.auth.linkHolder(id),
    mayRead: (principal, { area, db, col }) => {
      const documents = area === 'data_store' ? ctx.documents.dataStore : ctx.documents.catalog;
      return canAccessCollection(principal, area, db, col, 'safe', documents.policy);
    },
  };
  mount(m.health, healthRouter(ctx));
  mount(m.schema, schemaRouter(mounted));

  for (const { path, router } of extra.beforeBody ?? []) app.use(path, router);

  // The steps of every request under /api, in this order, as one layer.
  app.use(
    '/api',
    chain([
      ctx.auth.session,
      ctx.auth.authenticate,
      linkAuthentication(links),
      ctx.auth.csrf,
      // Who may send a body is known from the headers: refused callers are answered before it is read.
      bodyGate({
        anonymousPaths: [m.auth.at.login, m.auth.at.logout, m.auth.at.token, m.auth.at.refresh, m.auth.at.verify].map((r) =>
          fullPath(m.auth, r),
        ),
        permissions: [
          { prefix: m.dataStore.prefix, refusal: (req, s) => writeRefusal(req.principal, ctx.documents.dataStore, req.method, s) },
          { prefix: m.catalog.prefix, refusal: (req, s) => writeRefusal(req.principal, ctx.documents.catalog, req.method, s) },
          { prefix: m.queue.prefix, refusal: (req, s) => submissionRefusal(req.principal, req.method, s) },
        ],
        serves: servedBy(Object.values(m)),
      }),
    ]),
  );
  // Routes from the route table read their bodies themselves (serve); the other parts under /api
  // (the explorer, extra routers, and paths nothing serves, before their 404) read them as JSON.
  const anyBody = jsonBody({ maxBytes: settings.maxBodyBytes });

  mount(m.auth, ctx.auth.router);
  mount(m.links, linksRouter(links));
  app.get(fullPath(m.dataStore, m.dataStore.at.collection), exploreLink('data_store'));
  app.get(fullPath(m.catalog, m.catalog.at.collection), exploreLink('catalog'));
  mount(m.dataStore, documentsRouter(ctx, ctx.documents.dataStore, m.dataStore.prefix));
  mount(m.catalog, documentsRouter(ctx, ctx.documents.catalog, m.catalog.prefix));
  mount(m.dataStoreIndexes, indexesRouter(ctx.documents.dataStore));
  mount(m.catalogIndexes, indexesRouter(ctx.documents.catalog));
  app.use(PAGES.explorer.path, ...anyBody, explorerRouter({ settings, areas: ctx.documents }));
  mount(m.queue, queueRouter(ctx, m.queue.prefix));
  for (const { path, router } of extra.api ?? []) app.use(`/api${path}`, ...anyBody, router);
  mount(m.root, rootRouter(rootLinks(m)));
  const apiRoot = fullPath(m.root, m.root.at.root);
  app.get(PAGES.home.path, (_req, res) => res.redirect(302, apiRoot));
  app.use('/api', ...anyBody);

  app.use(notFoundHandler());
  app.use(errorHandler(logger, settings.debug, ctx.storage));
  return app;
}
