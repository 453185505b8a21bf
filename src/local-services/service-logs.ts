/**
 * The log files the local services write (each service's output, captured by spawnManaged) and
 * the local supervisor's own. They hold what the services print: connection details, queries,
 * records quoted in errors. So they are readable and writable by their owner only.
 */
import { closeSync, fchmodSync, openSync } from 'node:fs';
import { chmod, readdir } from 'node:fs/promises';
import { join } from 'node:path';

export const LOG_FILE_MODE = 0o600;

/**
 * Opens `file` for appending and answers its descriptor. A new file is made with LOG_FILE_MODE;
 * an existing one is narrowed to it, so a file an earlier version left readable by everyone
 * (they made them 0644) is private again from the next start on.
 */
export function openLogFile(file: string): number {
  const fd = openSync(file, 'a', LOG_FILE_MODE);
  try {
    fchmodSync(fd, LOG_FILE_MODE);
  } catch (err) {
    closeSync(fd);
    throw err;
  }
  return fd;
}

/**
 * Narrows every file directly in `dir` to LOG_FILE_MODE: for a service that writes log files of
 * its own there (RabbitMQ's upgrade log, an Erlang crash dump), made by earlier versions with the
 * default 0644. A missing directory has nothing to narrow.
 */
export async function narrowLogFiles(dir: string): Promise<void> {
  const entries = await readdir(dir, { withFileTypes: true }).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return [];
    throw err;
  });
  await Promise.all(entries.filter((entry) => entry.isFile()).map((entry) => chmod(join(dir, entry.name), LOG_FILE_MODE)));
}
