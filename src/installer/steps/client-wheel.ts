/**
 * The researchers' Python client, built as a wheel the API serves at /api/client/python/ (so
 * `pip install` works from any machine that reaches the server, without a package index). Runs
 * ops/build-client-wheel.sh on every install and upgrade: a no-op when the client's sources are
 * unchanged, a rebuild when an upgrade changed them. Local runtime only: the API process there
 * serves the repository's .cache/client; a compose API container does not see it.
 */
import { join } from 'node:path';
import { repositoryRoot } from '../../installation/layout.js';
import { run } from '../../installation/runner/compose-command.js';
import type { InstallContext, Step } from '../step.js';

export const clientWheel: Step = {
  id: 'client-wheel',
  title: 'Python client download',
  phase: 'apply',
  skip: (ctx) => (ctx.config.runtime !== 'local' ? 'compose runtime' : undefined),
  async run(ctx: InstallContext) {
    const result = await run('bash', [join(repositoryRoot(), 'ops', 'build-client-wheel.sh')], {
      onOutput: (text) => ctx.progress.logOnly(text),
    });
    if (result.code !== 0) {
      // The service works without the download: say why and go on.
      ctx.progress.warn(`the Python client could not be built (exit ${result.code}); see the install log`);
      return 'not built';
    }
    const said = /client-wheel: (.*)$/m.exec(result.stdout.trim().split('\n').at(-1) ?? '')?.[1] ?? 'done';
    return said;
  },
};
