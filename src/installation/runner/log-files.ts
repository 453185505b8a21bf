/** Reading and following log files (local runtime), without loading whole files. */
import { createReadStream } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';

/** The last `lines` lines of a file ('' when it does not exist). */
export async function tailFile(file: string, lines: number, maxBytes = 1024 * 1024): Promise<string> {
  let handle;
  try {
    handle = await open(file, 'r');
  } catch {
    return '';
  }
  try {
    const { size } = await handle.stat();
    const length = Math.min(size, maxBytes);
    const buffer = Buffer.alloc(length);
    await handle.read(buffer, 0, length, size - length);
    const all = buffer.toString('utf8').replace(/\n$/, '').split('\n');
    return all.slice(-lines).join('\n');
  } finally {
    await handle.close();
  }
}

/** Prints the tail, then new lines as they are written, until the process is interrupted. */
export async function followFile(file: string, lines: number, write: (text: string) => void): Promise<void> {
  const initial = await tailFile(file, lines);
  if (initial) write(`${initial}\n`);
  let position = (await stat(file).catch(() => ({ size: 0 }))).size;
  for (;;) {
    await sleep(500);
    const size = (await stat(file).catch(() => ({ size: 0 }))).size;
    if (size < position) position = 0; // truncated or replaced
    if (size > position) {
      await new Promise<void>((resolve, reject) => {
        const stream = createReadStream(file, { start: position, end: size - 1, encoding: 'utf8' });
        stream.on('data', (chunk) => write(String(chunk)));
        stream.on('end', resolve);
        stream.on('error', reject);
      });
      position = size;
    }
  }
}
