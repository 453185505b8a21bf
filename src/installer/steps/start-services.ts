/**
 * Starts the services, or restarts them on a re-run so changed configuration and certificates
 * take effect. Data stays where it is (named volumes, or data/ of the install directory).
 */
import { openRuntime } from '../../installation/runner/open-runtime.js';
import type { InstallContext, Step } from '../step.js';

export const startServices: Step = {
  id: 'start',
  title: 'Start services',
  phase: 'apply',
  relevantServices: ['database', 'broker', 'api', 'worker', 'supervisor', 'mongo', 'rabbitmq', 'proxy'],
  skip: (ctx) => (ctx.noStart ? '--no-start' : undefined),
  async run(ctx: InstallContext) {
    const runtime = await openRuntime(ctx.layout, ctx.config);
    ctx.runtime = runtime;
    const wasRunning = await runtime.isRunning();
    await runtime.startOrRestart();
    return wasRunning ? `restarted (${runtime.kind})` : `started (${runtime.kind})`;
  },
};
