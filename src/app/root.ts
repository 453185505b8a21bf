/** GET /api/ — the entry point: links to every part of the API (which ones: the route table's ROOT_LINKS). */
import { Router } from 'express';
import { absoluteUrl } from '../http/base-url.js';
import { COMMON, ok } from '../http/openapi-parts.js';
import { respond } from '../http/respond.js';
import { route, serve } from '../http/route-table.js';

export const ROOT_ROUTES = {
  root: route('/', { GET: { summary: 'Links to every part of the API', parameters: COMMON, responses: { 200: ok('Links') } } }),
};

/** `links`: each part's name and path, in the order the page shows them. */
export function rootRouter(links: readonly (readonly [name: string, path: string])[]): Router {
  const router = Router({ strict: true });
  serve(router, ROOT_ROUTES.root, {
    GET: async (req, res) => {
      respond(req, res, 200, Object.fromEntries(links.map(([name, path]) => [name, absoluteUrl(req, path)])));
    },
  });
  return router;
}
