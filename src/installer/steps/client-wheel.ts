/**
 * The researchers' Python client, built as a wheel the API serves at /api/client/python/ (so
 * `pip install` works from any machine that reaches the server, without a package index). Runs
 * ops/build-client-wheel.sh on every install and upgrade of the local runtime: a no-op when the
 * client's sources are unchanged, a rebuild when an upgrade changed them; the local API serves the
 * repository's .cache/client. The compose runtime's API image builds and carries its own wheel
 * (docker/api.Dockerfile), so nothing is built on the host for it.
 */
import { join } from 'node:path';
import { repositoryRoot } from '../../installation/layout.js';
import { run } from '../../installation/runner/compose-command.js';
import type { InstallContext, Step } from '../step.js';

export const clientWheel: Step = {
  id: 'client-wheel',
  title: 'Python client download',
  phase: 'apply',
  async run(ctx: InstallContext) {
    if (ctx.config.runtime === 'compose') return 'carried by the API image';
    const result = await run('bash', [join(repositoryRoot(), 'ops', 'build-client-wheel.sh')], {
      env: process.env,
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
