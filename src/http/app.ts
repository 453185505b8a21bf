/**
 * Assembles the express application. Order matters and is the architecture:
 * request id → allowed hosts → security headers → format → canonical slash → (admin site) →
 * session → authentication → CSRF → JSON body → routes → 404 → error mapping.
 */
import express, { type Express, type Router } from 'express';
import type { ServiceContext } from '../service.js';
import { allowedHosts } from './allowed-hosts.js';
import { jsonBody } from './body.js';
import { errorHandler, notFoundHandler } from './error-handler.js';
import { negotiateFormat } from './format.js';
import { requestLog } from './request-log.js';
import { securityHeaders } from './security-headers.js';
import { canonicalTrailingSlash } from './trailing-slash.js';
import { ANONYMOUS } from '../auth/principal.js';
import { rootRouter } from './root.js';
import { documentsRouter } from '../documents/routes.js';
import { queueRouter } from '../queue/api/routes.js';
import { healthRouter } from './health.js';
import { schemaRouter } from './openapi.js';
import './request-context.js';

export interface ExtraRouters {
  /** Mounted before the body parsers (AdminJS requires that). */
  beforeBody?: { path: string; router: Router }[];
  /** Mounted under /api after authentication. */
  api?: { path: string; router: Router }[];
}

export function createApp(ctx: ServiceContext, extra: ExtraRouters = {}): Express {
  const { settings, logger } = ctx;
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  app.set('trust proxy', settings.trustProxy ? 1 : false);
  app.set('json spaces', 0);

  app.use((req, res, next) => {
    req.principal = ANONYMOUS;
    res.locals.pageOptions = { title: settings.applicationTitle };
    next();
  });
  app.use(requestLog(logger));
  app.use(allowedHosts(settings.allowedHosts));
  app.use(securityHeaders({ https: false }));
  app.use(negotiateFormat());
  app.use(canonicalTrailingSlash('/api'));
  app.use('/api/health', healthRouter(ctx));
  app.use('/api/schema', schemaRouter());

  for (const { path, router } of extra.beforeBody ?? []) app.use(path, router);

  app.use('/api', ctx.auth.session);
  app.use('/api', ctx.auth.authenticate);
  app.use('/api', ctx.auth.csrf);
  // HTML forms are accepted only by the login page; everything else takes JSON.
  app.use('/api/auth', ...jsonBody({ maxBytes: settings.maxBodyBytes, allowForm: true }));
  app.use('/api', ...jsonBody({ maxBytes: settings.maxBodyBytes }));

  app.use('/api', ctx.auth.router);
  app.use('/api/data_store/data', documentsRouter(ctx, ctx.documents.dataStore));
  app.use('/api/catalog/data', documentsRouter(ctx, ctx.documents.catalog));
  app.use('/api/queue', queueRouter(ctx));
  for (const { path, router } of extra.api ?? []) app.use(`/api${path}`, router);
  app.use('/api', rootRouter(ctx));
  app.get('/', (_req, res) => res.redirect(302, '/api/'));

  app.use(notFoundHandler());
  app.use(errorHandler(logger, settings.debug));
  return app;
}
