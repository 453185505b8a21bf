/**
 * The manual, built for /api/manual/ so the installed service serves it itself (a lab whose
 * network has no internet still has it). Runs ops/build-manual.sh on every install and upgrade:
 * a no-op when the manual's sources are unchanged, a rebuild when an upgrade changed them. The
 * local API serves the repository's .cache/manual (MANUAL_DIR's default); the compose API image
 * builds the manual into itself, so there is nothing to do here for compose.
 */
import { join } from 'node:path';
import { repositoryRoot } from '../../installation/layout.js';
import { run } from '../../installation/runner/compose-command.js';
import type { InstallContext, Step } from '../step.js';

export const manual: Step = {
  id: 'manual',
  title: 'Manual',
  phase: 'apply',
  skip: (ctx) => (ctx.config.runtime === 'compose' ? 'built into the API image' : undefined),
  async run(ctx: InstallContext) {
    const result = await run('bash', [join(repositoryRoot(), 'ops', 'build-manual.sh')], {
      onOutput: (text) => ctx.progress.logOnly(text),
    });
    if (result.code !== 0) {
      // The service works without its manual: say why and go on.
      ctx.progress.warn(`the manual could not be built (exit ${result.code}); see the install log`);
      return 'not built';
    }
    return /manual: (.*)$/m.exec(result.stdout.trim().split('\n').at(-1) ?? '')?.[1] ?? 'done';
  },
};
