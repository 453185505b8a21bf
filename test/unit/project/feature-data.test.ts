import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

// Each feature's collections are read and written through the module that owns them: the task
// log through TaskLog, results through ResultStore, records through DocumentStore. Reaching a
// collection by name from elsewhere couples the two features' storage below their interfaces
// (a renamed field or a new index would silently miss the other reader), so it is looked for here.

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
}

const OWNED: { what: string; owner: string; pattern: RegExp }[] = [
  { what: 'the task log', owner: 'src/queue/api/task-log.ts', pattern: /\.log\.collection\b|collection(<[^>]*>)?\(\s*'task_log'/ },
  { what: 'the results', owner: 'src/queue/results/result-store.ts', pattern: /\.results\.collection\b/ },
];

describe("features' data through their own modules", () => {
  const files = sourceFiles('src');

  it.each(OWNED)('nothing but its module reaches $what by its collection', ({ owner, pattern }) => {
    const reaching = files.filter((file) => file !== owner && pattern.test(readFileSync(file, 'utf8')));
    expect(reaching).toEqual([]);
  });

  it('only the queue module names the task log’s collection', () => {
    // The admin site, the metrics and the installation read the log through QueueService; a
    // second description of it elsewhere (a schema, a collection name) would drift from the owner's.
    const naming = files.filter((file) => !file.startsWith(join('src', 'queue') + '/') && /\btask_log\b/.test(readFileSync(file, 'utf8')));
    expect(naming).toEqual([]);
  });

  it('the documents store raises domain errors, never HTTP ones', () => {
    const store = readFileSync('src/documents/store.ts', 'utf8');
    expect(store).not.toMatch(/from '\.\.\/errors\.js'|ApiError|badRequest|notFound\(/);
  });
});
