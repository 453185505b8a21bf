/** Atomic writes that leave an identical file untouched (its bytes and its mtime). */
import { readFile } from 'node:fs/promises';
import { writeFileAtomic } from '../pki/files.js';

export async function writeIfChanged(path: string, content: string, mode: number): Promise<boolean> {
  const current = await readFile(path, 'utf8').catch(() => undefined);
  if (current === content) return false;
  await writeFileAtomic(path, content, mode);
  return true;
}
