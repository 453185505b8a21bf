/**
 * Local runtime: installs what preflight found missing by running ops/prepare-local.sh (RabbitMQ
 * from Debian's packages, FerretDB built from its Go module, npm packages), the same script
 * `npm run up` and the test suite use. Its output goes to the install log; its sub-steps (the
 * engine build takes minutes on a fresh machine) are shown as they start and end.
 */
import { join } from 'node:path';
import { repositoryRoot } from '../../installation/layout.js';
import { run } from '../../installation/runner/compose-command.js';
import type { InstallContext, Step } from '../step.js';
import { SubStepReporter } from '../sub-steps.js';
import { missingLocalPrerequisites } from './preflight-runtime.js';

export const prerequisites: Step = {
  id: 'prerequisites',
  title: 'Local prerequisites',
  phase: 'apply',
  skip: (ctx) => (ctx.config.runtime !== 'local' ? 'compose runtime' : ctx.missingPrerequisites.length === 0 ? 'all present' : undefined),
  async run(ctx: InstallContext) {
    const subSteps = new SubStepReporter(ctx.progress);
    const result = await run('bash', [join(repositoryRoot(), 'ops', 'prepare-local.sh')], {
      onOutput: (text) => subSteps.feed(text),
    }).finally(() => subSteps.end());
    if (result.code !== 0)
      throw new Error(
        `ops/prepare-local.sh failed (exit ${result.code}):\n${(result.stderr || result.stdout).trim().split('\n').slice(-15).join('\n')}`,
      );
    const still = missingLocalPrerequisites(ctx.config);
    if (still.length > 0) throw new Error(`still missing after ops/prepare-local.sh: ${still.join(', ')}`);
    return `installed ${ctx.missingPrerequisites.length}`;
  },
};
