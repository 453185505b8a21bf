/**
 * GET /api/metrics (with or without the trailing slash: scrapers are configured with a literal
 * path and a redirect would only cost a round trip): every metric in the Prometheus text format.
 */
import { Router } from 'express';
import { methods } from '../http/methods.js';
import { checkMetricsAccess } from './access.js';
import type { IpAllowList } from '../config/ip-allowlist.js';

/** Where the text comes from: this process's registries, or under the cluster all processes'. */
export interface MetricsExposition {
  readonly contentType: string;
  exposition(): Promise<string>;
}

export function metricsRouter(source: MetricsExposition, allowList: IpAllowList): Router {
  const router = Router({ strict: false });
  router.all(
    '/',
    methods({
      GET: async (req, res) => {
        checkMetricsAccess(req.principal, req.ip, allowList);
        const body = await source.exposition();
        res.status(200).setHeader('Content-Type', source.contentType);
        res.setHeader('Cache-Control', 'no-store');
        res.end(body);
      },
    }),
  );
  return router;
}
