import { describe, expect, it } from 'vitest';
import { Progress } from '../../../src/installer/progress.js';
import { SubStepReporter, parseSubStep } from '../../../src/installer/sub-steps.js';

describe('parseSubStep', () => {
  it.each([
    ['prepare-local: [start] database engine', { kind: 'start', name: 'database engine' }],
    ['build-engine: [done] FerretDB (214 s)', { kind: 'done', name: 'FerretDB', seconds: 214 }],
    [
      'build-engine: [done] PostgreSQL extensions (pg_cron, pgvector, DocumentDB) (3 s)',
      { kind: 'done', name: 'PostgreSQL extensions (pg_cron, pgvector, DocumentDB)', seconds: 3 },
    ],
    ['build-engine: ferretdb: present (v2.7.0)', undefined],
    ['go: downloading github.com/x [start] y', undefined],
  ])('%s', (line, expected) => {
    expect(parseSubStep(line)).toEqual(expected);
  });
});

describe('SubStepReporter', () => {
  function capture(isTTY: boolean): { out: string[]; progress: Progress } {
    const out: string[] = [];
    return { out, progress: new Progress({ write: (text: string) => out.push(text), isTTY }) };
  }

  it('shows each sub-step as it starts and ends, from lines split across chunks', () => {
    const { out, progress } = capture(false);
    const reporter = new SubStepReporter(progress);
    reporter.feed('prepare-local: [sta');
    reporter.feed('rt] database engine\nbuild-engine: ferretdb: built v2.7.0\n');
    reporter.feed('prepare-local: [done] database engine (301 s)\n');
    reporter.end();
    expect(out).toEqual(['      database engine ...\n', '      database engine: done in 301 s\n']);
  });

  it('draws a live line with the elapsed seconds on a terminal only, and clears it before the next line', async () => {
    let now = 0;
    const tty = capture(true);
    const reporter = new SubStepReporter(tty.progress, () => now);
    reporter.feed('build-engine: [start] FerretDB\n');
    now = 42_000;
    await new Promise((r) => setTimeout(r, 1100));
    reporter.feed('build-engine: [done] FerretDB (42 s)\n');
    reporter.end();
    expect(tty.out).toContain('\r\x1b[K      FerretDB ... 42 s');
    expect(tty.out.at(-1)).toBe('      FerretDB: done in 42 s\n');
    expect(tty.out.at(-2)).toBe('\r\x1b[K');

    const plain = capture(false);
    const quiet = new SubStepReporter(plain.progress, () => now);
    quiet.feed('build-engine: [start] FerretDB\n');
    await new Promise((r) => setTimeout(r, 1100));
    quiet.end();
    expect(plain.out.join('')).not.toContain('\r');
  });
});
