/**
 * Waits until every service is healthy as a user sees it: database and broker logins over TLS,
 * the API's health endpoint, a worker answering a ping.
 */
import { waitUntilHealthy } from '../../installation/health.js';
import type { InstallContext, Step } from '../step.js';

export const HEALTH_TIMEOUT_MS = 180_000;

export const waitHealthy: Step = {
  id: 'wait-healthy',
  title: 'Wait until healthy',
  phase: 'apply',
  relevantServices: ['api', 'worker', 'broker', 'database', 'proxy', 'mongo', 'rabbitmq'],
  skip: (ctx) => (ctx.noStart ? '--no-start' : undefined),
  async run(ctx: InstallContext) {
    let last = '';
    const checks = await waitUntilHealthy(
      { layout: ctx.layout, config: ctx.config, secrets: ctx.secrets! },
      HEALTH_TIMEOUT_MS,
      (current) => {
        const text = current.map((c) => `${c.name} ${c.ok ? 'ok' : 'waiting'}`).join(', ');
        if (text !== last) ctx.progress.detail(text);
        last = text;
      },
    );
    return checks.map((c) => c.name).join(', ') + ' healthy';
  },
};
