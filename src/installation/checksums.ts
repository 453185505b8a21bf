/** SHA256SUMS files (the format `sha256sum -c` reads) for bundles and backups. */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';

export async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}

/** `<hex>  <relative path>` for every file under dir except those in `exclude`, sorted. */
export async function checksumLines(dir: string, exclude: string[] = ['SHA256SUMS']): Promise<string> {
  const files = (await listFiles(dir))
    .map((f) => relative(dir, f))
    .filter((f) => !exclude.includes(f))
    .sort();
  const lines = await Promise.all(files.map(async (f) => `${await sha256File(join(dir, f))}  ${f}`));
  return `${lines.join('\n')}\n`;
}

/** Files whose checksum differs from a SHA256SUMS file (missing files count as different). */
export async function verifyChecksums(dir: string, sumsFile = 'SHA256SUMS'): Promise<string[]> {
  const text = await readFile(join(dir, sumsFile), 'utf8');
  const bad: string[] = [];
  for (const line of text.split('\n').filter(Boolean)) {
    const match = /^([0-9a-f]{64}) {2}(.+)$/.exec(line);
    if (!match) {
      bad.push(`(malformed line) ${line}`);
      continue;
    }
    const [, expected, file] = match as unknown as [string, string, string];
    const actual = await sha256File(join(dir, file)).catch(() => 'missing');
    if (actual !== expected) bad.push(file);
  }
  return bad;
}
