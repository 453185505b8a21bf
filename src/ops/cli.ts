/**
 * Entry point of the operator commands in ops/ (each a thin shim that names its command):
 * status, logs, services, cert-status, rotate-certs, worker-bundle, backup, restore,
 * clear-login-failures.
 * Every command has --help, runs without questions and exits 0 (ok), 1 (failed), 2 (usage) or
 * 3 (no installation); cert-status and status use 1 for "something needs attention".
 */
import { backup } from './commands/backup.js';
import { certStatus } from './commands/cert-status.js';
import { clearLoginFailures } from './commands/clear-login-failures.js';
import { CommandError, EXIT, type Command } from './commands/common.js';
import { logs } from './commands/logs.js';
import { restore } from './commands/restore.js';
import { rotateCerts } from './commands/rotate-certs.js';
import { services } from './commands/services.js';
import { status } from './commands/status.js';
import { workerBundle } from './commands/worker-bundle.js';

export const COMMANDS: Record<string, Command> = {
  status,
  logs,
  services,
  'cert-status': certStatus,
  'rotate-certs': rotateCerts,
  'worker-bundle': workerBundle,
  backup,
  restore,
  'clear-login-failures': clearLoginFailures,
};

export async function runOpsCommand(name: string | undefined, argv: string[]): Promise<number> {
  const command = name === undefined ? undefined : COMMANDS[name];
  if (!command) {
    process.stderr.write(`unknown operator command "${name ?? ''}" (one of ${Object.keys(COMMANDS).join(', ')})\n`);
    return EXIT.usage;
  }
  try {
    return await command(argv);
  } catch (err) {
    if (err instanceof CommandError) {
      process.stderr.write(`${name}: ${err.message}\n`);
      return err.exitCode;
    }
    process.stderr.write(`${name}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    return EXIT.failed;
  }
}

const [name, ...rest] = process.argv.slice(2);
void runOpsCommand(name, rest).then((code) => process.exit(code));
