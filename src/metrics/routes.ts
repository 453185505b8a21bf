/**
 * GET /api/metrics (with or without the trailing slash: scrapers are configured with a literal
 * path and a redirect would only cost a round trip): every metric in the Prometheus text format.
 */
import { Router } from 'express';
import type { Registry } from 'prom-client';
import { methods } from '../http/methods.js';
import { checkMetricsAccess } from './access.js';
import type { IpAllowList } from './ip-allowlist.js';

export function metricsRouter(registry: Registry, allowList: IpAllowList): Router {
  const router = Router({ strict: false });
  router.all(
    '/',
    methods({
      GET: async (req, res) => {
        checkMetricsAccess(req.principal, req.ip, allowList);
        const body = await registry.metrics();
        res.status(200).setHeader('Content-Type', registry.contentType);
        res.setHeader('Cache-Control', 'no-store');
        res.end(body);
      },
    }),
  );
  return router;
}
