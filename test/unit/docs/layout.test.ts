import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

// The source layout is written in one place, the manual's architecture page; this keeps it
// true: every folder under src/ is named there, and every folder named there exists.

/** The folders a layout block names under `src/`, by their indentation (two spaces a level). */
function namedFolders(page: string): string[] {
  const block = /## Layout\n[\s\S]*?```\n([\s\S]*?)```/.exec(page)?.[1];
  if (block === undefined) return [];
  const folders: string[] = [];
  const parents: string[] = [];
  let inSrc = false;
  for (const line of block.split('\n')) {
    const indent = line.length - line.trimStart().length;
    const name = line.trim().split(/\s+/)[0] ?? '';
    if (indent === 0) {
      inSrc = name === 'src/';
      continue;
    }
    // Descriptions run on at a deeper column than any folder; a name is a folder by its slash.
    if (!inSrc || indent % 2 !== 0 || indent > 12 || !name.endsWith('/')) continue;
    const depth = indent / 2;
    parents.length = depth - 1;
    parents.push(name.slice(0, -1));
    folders.push(parents.join('/'));
  }
  return folders.sort();
}

function sourceFolders(dir: string, prefix = ''): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .flatMap((entry) => {
      const path = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
      return [path, ...sourceFolders(join(dir, entry.name), path)];
    })
    .sort();
}

describe('the layout in docs/architecture.md', () => {
  const named = namedFolders(readFileSync('docs/architecture.md', 'utf8'));
  const existing = sourceFolders('src');

  it('names every folder under src/', () => {
    expect(existing.filter((folder) => !named.includes(folder))).toEqual([]);
  });

  it('names no folder that does not exist', () => {
    expect(named.filter((folder) => !existing.includes(folder))).toEqual([]);
  });

  it('is read by indentation, folder by folder', () => {
    const page = '## Layout\n\n```\nsrc/  the service\n  a/    one\n    b/  two\n                    c/ not a folder: a description\n  d.ts  a file\nother/  not src\n  e/\n```\n';
    expect(namedFolders(page)).toEqual(['a', 'a/b']);
  });
});
