/** GET /api/ — the entry point: links to every part of the API. */
import { Router } from 'express';
import type { ServiceContext } from './service-context.js';
import { absoluteUrl } from '../http/base-url.js';
import { respond } from '../http/respond.js';

export function rootRouter(_ctx: ServiceContext): Router {
  const router = Router({ strict: true });
  router.get('/', (req, res) => {
    res.locals.allow = ['GET', 'HEAD', 'OPTIONS'];
    respond(req, res, 200, {
      queue: absoluteUrl(req, '/api/queue/'),
      'user tasks': absoluteUrl(req, '/api/queue/usertasks/'),
      catalog: absoluteUrl(req, '/api/catalog/data/'),
      'data store': absoluteUrl(req, '/api/data_store/data/'),
      'user profile': absoluteUrl(req, '/api/user/'),
      schema: absoluteUrl(req, '/api/schema/'),
      health: absoluteUrl(req, '/api/health/'),
      manual: absoluteUrl(req, '/api/manual/'),
    });
  });
  return router;
}
