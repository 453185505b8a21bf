/**
 * GET /api/health/ — readiness for load balancers, compose healthchecks and the installer:
 * 200 when every probe answers, 503 naming the failing part. No secrets, no versions.
 * A database that answers but cannot store anything (its disk is full) is `degraded`: reads
 * still work, writes get 503, and the overall status is `degraded` with 503 so monitoring
 * notices before users do.
 */
import { Router } from 'express';
import pTimeout from 'p-timeout';
import type { ServiceContext } from './service-context.js';
import { COMMON, ok } from '../http/openapi-parts.js';
import { route, serve } from '../http/route-table.js';
import { respond } from '../http/respond.js';

const PROBE_TIMEOUT_MS = 3_000;

const withTimeout = <T>(probe: () => Promise<T>): Promise<T> => pTimeout(probe(), { milliseconds: PROBE_TIMEOUT_MS, message: 'timeout' });

export const HEALTH_ROUTES = {
  health: route('/', {
    GET: {
      summary: 'Database and broker reachability, and whether the database can store anything',
      parameters: COMMON,
      responses: { 200: ok('Healthy'), 503: ok('Unavailable, or degraded (the database answers but its storage is full)') },
    },
  }),
};

export function healthRouter(ctx: ServiceContext): Router {
  const router = Router({ strict: true });
  serve(router, HEALTH_ROUTES.health, {
    GET: async (req, res) => {
      const checks: Record<string, 'ok' | 'degraded' | 'unavailable' | 'not configured'> = {};
      await Promise.all(
        [...ctx.healthProbes.entries()].map(async ([name, probe]) => {
          try {
            await withTimeout(probe);
            checks[name] = 'ok';
          } catch {
            checks[name] = 'unavailable';
          }
        }),
      );
      if (checks.database === 'ok') {
        try {
          if ((await withTimeout(() => ctx.storage.condition())) === 'full') checks.database = 'degraded';
        } catch {
          // A probe that does not finish in time says nothing about space; reachability already passed.
        }
      }
      if (ctx.settings.broker === undefined) checks.broker = 'not configured';
      const values = Object.values(checks);
      const status = values.includes('unavailable') ? 'unavailable' : values.includes('degraded') ? 'degraded' : 'ok';
      respond(req, res, status === 'ok' ? 200 : 503, { status, checks });
    },
  });
  return router;
}
