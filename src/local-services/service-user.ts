/**
 * Running a server as its own system user (`rabbitmq`, `postgres`) when we are root, the way the
 * distribution's service wrappers do. We drop privileges with `setpriv` (an exec, no fork) rather
 * than `su`: `su` starts the server in a session of its own, so signals to our process group
 * would not reach it and it could outlive us. As any other user, servers run as that user.
 */
import { execFile } from 'node:child_process';
import { chown, lstat, readdir, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
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

/** The numeric id of an OS group. */
export async function groupId(name: string): Promise<number> {
  const { stdout } = await execFileAsync('getent', ['group', name]).catch(() => ({ stdout: '' }));
  const gid = stdout.trim().split(':')[2];
  if (!gid) throw new Error(`no ${name} group`);
  return Number(gid);
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

/**
 * Creates `name` as a system user with a group of its own, no home and no shell, when root and
 * it is missing: for a server that must not share its files with any other server's user.
 */
export async function ensureSystemUser(name: string): Promise<void> {
  if (process.getuid?.() !== 0) return;
  const { stdout } = await execFileAsync('getent', ['passwd', name]).catch(() => ({ stdout: '' }));
  if (stdout.trim() !== '') return;
  const useradd = findExecutable('useradd', ['/usr/sbin', '/sbin']);
  if (!useradd) throw new Error(`useradd (passwd) is needed to create the system user ${name}`);
  await execFileAsync(useradd, [
    '--system',
    '--user-group',
    '--no-create-home',
    '--home-dir',
    '/nonexistent',
    '--shell',
    '/usr/sbin/nologin',
    name,
  ]).catch(async (err: unknown) => {
    // Another process may have created it meanwhile.
    const again = await execFileAsync('getent', ['passwd', name]).catch(() => ({ stdout: '' }));
    if (again.stdout.trim() === '')
      throw new Error(`could not create the system user ${name}: ${(err as { stderr?: string }).stderr ?? String(err)}`);
  });
}

/**
 * Hands a whole tree to the RunAs user when its top is someone else's (a data directory made as
 * another user by an earlier version); a no-op when it is already theirs or we run as ourselves.
 * Symbolic links are changed themselves, never followed.
 */
export async function handOverTree(runAs: RunAs, dir: string): Promise<void> {
  if (!runAs.owner) return;
  const { uid, gid } = runAs.owner;
  const top = await stat(dir);
  if (top.uid === uid && top.gid === gid) return;
  const walk = async (path: string): Promise<void> => {
    const info = await lstat(path);
    if (info.isSymbolicLink()) return;
    await chown(path, uid, gid);
    if (info.isDirectory()) for (const entry of await readdir(path)) await walk(join(path, entry));
  };
  await walk(dir);
}
