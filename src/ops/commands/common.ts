/**
 * What every operator command shares: the `--dir` option, loading the installation, exit codes,
 * and turning a thrown error into a one-line message instead of a stack trace.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { Installation } from '../../installation/health.js';
import { loadInstallConfig } from '../../installation/install-config.js';
import { defaultInstallDir, installLayout } from '../../installation/layout.js';
import { loadSecrets } from '../../installation/secrets.js';

export const EXIT = { ok: 0, failed: 1, usage: 2, notInstalled: 3 } as const;

export class CommandError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT.failed,
  ) {
    super(message);
  }
}

export const DIR_OPTION = { dir: { type: 'string' }, help: { type: 'boolean', short: 'h', default: false } } as const;

export const DIR_HELP = '  --dir DIR            the installation (default ./cybercom-data, or CYBERCOM_DIR)';

/** parseArgs with usage errors as CommandError(exit 2). */
export function parseCommandArgs<T extends NonNullable<ParseArgsConfig['options']>>(argv: string[], options: T, allowPositionals = false) {
  try {
    return parseArgs({ args: argv, options: { ...DIR_OPTION, ...options }, allowPositionals, strict: true });
  } catch (err) {
    throw new CommandError(`${(err as Error).message} (see --help)`, EXIT.usage);
  }
}

export function installDir(dir: string | undefined): string {
  return dir ?? process.env.CYBERCOM_DIR ?? defaultInstallDir();
}

export async function loadInstallation(dir: string | undefined): Promise<Installation> {
  const layout = installLayout(installDir(dir));
  try {
    const config = await loadInstallConfig(layout.installConfigFile);
    const secrets = await loadSecrets(layout.secretsFile);
    return { layout, config, secrets };
  } catch (err) {
    throw new CommandError(`no usable installation in ${layout.root}: ${(err as Error).message}`, EXIT.notInstalled);
  }
}

export type Command = (argv: string[]) => Promise<number>;
