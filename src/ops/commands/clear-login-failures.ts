/**
 * ops/clear-login-failures: clears the login throttle's failures of an account (from every client
 * address) or of a client address (over every account), so a user slowed by a typist's or a
 * guesser's failures is judged afresh at once instead of after LOGIN_WINDOW_S. The right password
 * gets in even while delayed (docs/security.md); what this clears is the 429 answer to wrong ones
 * and the growing waits. Uses the API's own throttle on the installation's service database, with
 * the API's identity, like the installer's administrator step.
 */
import { loadSettings, type Settings } from '../../config/settings.js';
import { connectMongo } from '../../db/mongo-client.js';
import { hostServiceEnv } from '../../installation/env-files.js';
import { loginThrottleFor, type ClearTarget } from '../../auth/login-throttle.js';
import { CommandError, DIR_HELP, EXIT, loadInstallation, parseCommandArgs, type Command } from './common.js';

export const CLEAR_LOGIN_FAILURES_HELP = `Usage: ops/clear-login-failures [--dir DIR] (--user NAME | --address ADDRESS)...

Clears the failed logins the API counts against an account (--user, from every client address;
names are compared without case) or a client address (--address, its count over all accounts and
each account's count from it). The next login is judged as if none had failed. Both may be given.
The right password is never refused for failures; clearing ends the 429 answers to wrong ones and
the waits Retry-After names. Device cookies' own counts are left alone.

${DIR_HELP}
  --user NAME          an account
  --address ADDRESS    a client address as the API sees it (behind a trusted proxy: the client's)
Exit codes: 0 done (also when nothing was locked), 1 failed, 2 usage error, 3 no installation.
`;

interface Output {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
}

/** Clears `target`'s failures in the service database `settings` name; returns how many counters had failures. */
export async function clearLoginFailuresIn(settings: Settings, target: ClearTarget, say: (line: string) => void): Promise<number> {
  const mongo = await connectMongo(settings.privateMongo);
  try {
    const cleared = await loginThrottleFor(mongo.db(settings.serviceDatabase), settings).clear(target);
    const what = [
      ...(target.username === undefined ? [] : [`account "${target.username}"`]),
      ...(target.address === undefined ? [] : [`address ${target.address}`]),
    ].join(' and ');
    say(cleared === 0 ? `No failed logins counted for ${what}.` : `Cleared ${cleared} failure count(s) of ${what}.`);
    return cleared;
  } finally {
    await mongo.close();
  }
}

export async function runClearLoginFailures(argv: string[], out: Output): Promise<number> {
  try {
    const { values } = parseCommandArgs(argv, { user: { type: 'string' }, address: { type: 'string' } });
    if (values.help) {
      out.stdout.write(CLEAR_LOGIN_FAILURES_HELP);
      return EXIT.ok;
    }
    const target: ClearTarget = {};
    if (values.user !== undefined) target.username = values.user;
    if (values.address !== undefined) target.address = values.address;
    if (target.username === undefined && target.address === undefined) {
      throw new CommandError('name an account (--user) or a client address (--address) (see --help)', EXIT.usage);
    }
    if (target.username?.trim() === '' || target.address?.trim() === '') throw new CommandError('an empty name or address', EXIT.usage);
    const inst = await loadInstallation(values.dir);
    const settings = loadSettings(hostServiceEnv(inst.layout, inst.config, inst.secrets));
    await clearLoginFailuresIn(settings, target, (line) => void out.stdout.write(`${line}\n`));
    return EXIT.ok;
  } catch (err) {
    if (!(err instanceof CommandError)) throw err;
    out.stderr.write(`clear-login-failures: ${err.message}\n`);
    return err.exitCode;
  }
}

export const clearLoginFailures: Command = (argv) => runClearLoginFailures(argv, process);
