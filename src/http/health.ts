/**
 * GET /api/health/ — readiness for load balancers, compose healthchecks and the installer:
 * 200 when every probe answers, 503 naming the failing part. No secrets, no versions.
 */
import { Router } from 'express';
import type { ServiceContext } from '../service.js';
import { methods } from './methods.js';
import { respond } from './respond.js';

const PROBE_TIMEOUT_MS = 3_000;

function withTimeout(probe: () => Promise<void>): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('timeout')), PROBE_TIMEOUT_MS);
    probe().then(
      () => {
        clearTimeout(timer);
        resolve();
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err instanceof Error ? err : new Error(String(err)));
      },
    );
  });
}

export function healthRouter(ctx: ServiceContext): Router {
  const router = Router({ strict: true });
  router.all('/', methods({
    GET: async (req, res) => {
      const checks: Record<string, 'ok' | 'unavailable' | 'not configured'> = {};
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
      if (ctx.settings.broker === undefined) checks.broker = 'not configured';
      const healthy = Object.values(checks).every((v) => v !== 'unavailable');
      respond(req, res, healthy ? 200 : 503, { status: healthy ? 'ok' : 'unavailable', checks });
    },
  }));
  return router;
}
