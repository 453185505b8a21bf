/**
 * Running a server as its own system user (`rabbitmq`, `postgres`) when we are root, the way the
 * distribution's service wrappers do. We drop privileges with `setpriv` (an exec, no fork) rather
 * than `su`: `su` starts the server in a session of its own, so signals to our process group
 * would not reach it and it could outlive us. As any other user, servers run as that user.
 */
import { execFile } from 'node:child_process';
import { chown, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { promisify } from 'node:util';
import { findExecutable } from './processes.js';

const execFileAsync = promisify(execFile);

export interface RunAs {
  /** Command prefix that runs the following command as the server's user (empty: as ourselves). */
  prefix: string[];
  /** Environment of that user (HOME, USER, LOGNAME), as `su` would set it. */
  env: Record<string, string>;
  /** Set when files must be handed to that user. */
  owner?: { uid: number; gid: number };
}

async function systemUser(name: string, installedBy: string): Promise<{ uid: number; gid: number; home: string }> {
  const { stdout } = await execFileAsync('getent', ['passwd', name]).catch(() => ({ stdout: '' }));
  const [, , uid, gid, , home] = stdout.trim().split(':');
  if (!uid || !gid || !home) throw new Error(`no ${name} user (is ${installedBy} installed?)`);
  return { uid: Number(uid), gid: Number(gid), home };
}

/** How to run a command as `user` (a system user created by the package `installedBy`). */
export async function runAsServiceUser(user: string, installedBy: string): Promise<RunAs> {
  if (process.getuid?.() !== 0) return { prefix: [], env: {} };
  const setpriv = findExecutable('setpriv', ['/usr/bin', '/bin']);
  if (!setpriv) throw new Error(`setpriv (util-linux) is needed to run ${installedBy} as its user`);
  const { uid, gid, home } = await systemUser(user, installedBy);
  return {
    prefix: [setpriv, `--reuid=${uid}`, `--regid=${gid}`, '--init-groups', '--'],
    env: { HOME: home, USER: user, LOGNAME: user },
    owner: { uid, gid },
  };
}

/** [command, args] that run `command args...` as the RunAs user. */
export function commandAs(runAs: RunAs, command: string, args: string[] = []): [string, string[]] {
  const [first, ...rest] = [...runAs.prefix, command, ...args];
  return [first as string, rest];
}

/** Hands the paths to the RunAs user (a no-op when we run as ourselves). */
export async function handOver(runAs: RunAs, paths: string[]): Promise<void> {
  if (!runAs.owner) return;
  const { uid, gid } = runAs.owner;
  await Promise.all(paths.map((p) => chown(p, uid, gid)));
}

/**
 * The server's user must be able to walk down to its directory. Fail with a clear message instead
 * of the server's own "permission denied" (mkdtemp creates 0700 directories, for one).
 */
export async function assertTraversable(runAs: RunAs, dir: string, user: string): Promise<void> {
  if (!runAs.owner) return;
  const { uid, gid } = runAs.owner;
  for (let current = dirname(dir); ; current = dirname(current)) {
    const info = await stat(current);
    const canEnter = info.uid === uid ? info.mode & 0o100 : info.gid === gid ? info.mode & 0o010 : info.mode & 0o001;
    if (!canEnter) {
      throw new Error(
        `the ${user} user cannot enter ${current} (mode ${(info.mode & 0o777).toString(8)}); ` +
          `put the server's directory somewhere it can reach or run \`chmod o+x ${current}\``,
      );
    }
    if (current === dirname(current)) return;
  }
}
