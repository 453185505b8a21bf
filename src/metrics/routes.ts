/**
 * GET /api/metrics (with or without the trailing slash: scrapers are configured with a literal
 * path and a redirect would only cost a round trip): every metric in the Prometheus text format.
 */
import { Router, type RequestHandler } from 'express';
import { ERRORS } from '../http/openapi-parts.js';
import { route, serve } from '../http/route-table.js';
import { checkMetricsAccess } from './access.js';
import type { IpAllowList } from '../config/ip-allowlist.js';

/** Where the text comes from: this process's registries, or under the cluster all processes'. */
export interface MetricsExposition {
  readonly contentType: string;
  exposition(): Promise<string>;
}

/** The app's route table mounts it at /api/metrics (the router is not strict, so it answers there too). */
export const METRICS_ROUTES = {
  metrics: route('/', {
    GET: {
      tags: ['metrics'],
      summary:
        'Every metric in the Prometheus text format, also without the trailing slash (superusers, the metrics_read role, or callers from METRICS_ALLOWED_IPS)',
      responses: {
        200: { description: 'Prometheus exposition', content: { 'text/plain': { schema: { type: 'string' } } } },
        ...ERRORS,
      },
    },
  }),
};

/** `before`: the steps that authenticate the scraper (the router is mounted ahead of the app's own). */
export function metricsRouter(source: MetricsExposition, allowList: IpAllowList, ...before: RequestHandler[]): Router {
  const router = Router({ strict: false });
  serve(
    router,
    METRICS_ROUTES.metrics,
    {
      GET: async (req, res) => {
        checkMetricsAccess(req.principal, req.ip, allowList);
        const body = await source.exposition();
        res.status(200).setHeader('Content-Type', source.contentType);
        res.setHeader('Cache-Control', 'no-store');
        res.end(body);
      },
    },
    ...before,
  );
  return router;
}
