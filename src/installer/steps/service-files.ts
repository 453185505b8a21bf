/**
 * Compose runtime: each container's copy of the keys and secrets it needs, owned by the user its
 * image runs as (see installation/compose-files.ts).
 */
import { writeComposeServiceFiles } from '../../installation/compose-files.js';
import type { InstallContext, Step } from '../step.js';

export const serviceFiles: Step = {
  id: 'service-files',
  title: 'Per-service key files',
  phase: 'apply',
  skip: (ctx) => (ctx.config.runtime !== 'compose' ? 'local runtime: each service is granted its own files in place at start' : undefined),
  async run(ctx: InstallContext) {
    await writeComposeServiceFiles(ctx.layout, ctx.config, ctx.secrets!);
    return 'written';
  },
};
