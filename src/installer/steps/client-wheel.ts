/**
 * The researchers' Python client, built as a wheel the API serves at /api/client/python/ (so
 * `pip install` works from any machine that reaches the server, without a package index). Runs
 * ops/build-client-wheel.sh on every install and upgrade: a no-op when the client's sources are
 * unchanged, a rebuild when an upgrade changed them. Built on this host in both runtimes: the
 * local API serves the repository's .cache/client; for compose the wheel goes to the install
 * directory's compose/client, which compose.yaml mounts read-only into the API containers.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { repositoryRoot } from '../../installation/layout.js';
import { run } from '../../installation/runner/compose-command.js';
import type { InstallContext, Step } from '../step.js';

/** Where the wheel is built for this installation (CLIENT_DOWNLOADS_DIR of the build script). */
function clientDownloadsDir(ctx: Pick<InstallContext, 'config' | 'layout'>): string | undefined {
  return ctx.config.runtime === 'compose' ? ctx.layout.composeClientDir : undefined;
}

export const clientWheel: Step = {
  id: 'client-wheel',
  title: 'Python client download',
  phase: 'apply',
  async run(ctx: InstallContext) {
    const downloads = clientDownloadsDir(ctx);
    if (downloads !== undefined) await mkdir(join(downloads, 'python'), { recursive: true, mode: 0o755 });
    const result = await run('bash', [join(repositoryRoot(), 'ops', 'build-client-wheel.sh')], {
      env: downloads === undefined ? process.env : { ...process.env, CLIENT_DOWNLOADS_DIR: downloads },
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
