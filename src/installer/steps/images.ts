/**
 * Compose runtime: pulls the official images and builds ours (docker/api.Dockerfile,
 * worker-image/Dockerfile); the build output goes to the install log. The local runtime runs
 * from this checkout and needs no images.
 */
import { ComposeRuntime } from '../../installation/runner/compose-runtime.js';
import type { InstallContext, Step } from '../step.js';

export const images: Step = {
  id: 'images',
  title: 'Images',
  phase: 'apply',
  skip: (ctx) => (ctx.noStart ? '--no-start' : ctx.config.runtime !== 'compose' ? 'local runtime runs from this checkout' : undefined),
  async run(ctx: InstallContext) {
    const runtime = new ComposeRuntime(ctx.layout);
    await runtime.prepareImages((text) => ctx.progress.logOnly(text));
    return 'pulled and built';
  },
};
