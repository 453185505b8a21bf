/**
 * Configuration files: the directory layout (install directory 0755 so the broker's user can
 * reach its data; config/ and certs/ 0700), install.json (the answers, migrated to the current
 * version), secrets.env (generated only where absent), the API's and the worker's env files, the
 * broker definitions and, for compose, compose.env. Everything is written atomically with mode
 * 0600 and only when its content changes, so a re-run with the same answers touches nothing.
 */
import { chmod, mkdir } from 'node:fs/promises';
import { writeDerivedConfig } from '../../installation/derived-config.js';
import { serializeInstallConfig } from '../../installation/install-config.js';
import { ensureSecrets } from '../../installation/secrets.js';
import { writeIfChanged } from '../../installation/write-if-changed.js';
import type { InstallContext, Step } from '../step.js';

async function ensureDirectory(path: string, mode: number): Promise<void> {
  await mkdir(path, { recursive: true, mode });
  await chmod(path, mode);
}

export const configuration: Step = {
  id: 'configuration',
  title: 'Configuration files',
  phase: 'apply',
  async run(ctx: InstallContext) {
    const { layout, config } = ctx;
    await ensureDirectory(layout.root, 0o755);
    await ensureDirectory(layout.configDir, 0o700);
    await ensureDirectory(layout.certsDir, 0o700);
    await ensureDirectory(layout.logsDir, 0o750);
    await ensureDirectory(layout.runDir, 0o750);

    const changed: string[] = [];
    if (await writeIfChanged(layout.installConfigFile, serializeInstallConfig(config), 0o600)) changed.push('install.json');
    const { secrets, generated } = await ensureSecrets(layout.secretsFile);
    ctx.secrets = secrets;
    if (generated.length > 0) changed.push(`secrets.env (generated ${generated.join(', ')})`);
    changed.push(...(await writeDerivedConfig(layout, config, secrets, ctx.env)));
    if (changed.length === 0) return 'unchanged';
    for (const item of changed) ctx.progress.detail(`wrote ${item}`);
    return ctx.isUpgrade ? `updated ${changed.length} file(s)` : 'created';
  },
};
