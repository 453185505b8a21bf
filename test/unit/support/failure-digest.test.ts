/**
 * The digest that ends `npm test`'s output, read from real vitest JSON reports: a run with a
 * failing assertion, a failing hook and a passing test, and a process that wrote no report.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatDigest, formatSlowest, type VitestJsonReport } from '../../support/failure-digest.js';

const vitestBin = resolve('node_modules/.bin/vitest');
let dir: string;
let failing: VitestJsonReport;
let passing: VitestJsonReport;

async function reportOf(name: string, files: Record<string, string>): Promise<VitestJsonReport> {
  const root = join(dir, name);
  await rm(root, { recursive: true, force: true });
  await mkdir(root, { recursive: true });
  await writeFile(join(root, 'vitest.config.mjs'), 'export default {};\n');
  for (const [file, text] of Object.entries(files)) await writeFile(join(root, file), text);
  const output = join(root, 'report.json');
  await promisify(execFile)(vitestBin, ['run', '--root', root, '--reporter=json', `--outputFile.json=${output}`]).catch(() => undefined);
  return JSON.parse(await readFile(output, 'utf8')) as VitestJsonReport;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'digest-'));
  failing = await reportOf('failing', {
    'numbers.test.mjs': [
      "import { expect, it } from 'vitest';",
      "it('adds', () => { expect(1 + 1).toBe(2); });",
      "it('multiplies wrongly', () => { expect(6 * 7, 'the product').toBe(41); });",
    ].join('\n'),
    'hooks.test.mjs': [
      "import { beforeAll, expect, it } from 'vitest';",
      "beforeAll(() => { throw new Error('the engine did not start'); });",
      "it('never runs', () => { expect(true).toBe(true); });",
    ].join('\n'),
  });
  passing = await reportOf('passing', {
    'ok.test.mjs': "import { expect, it } from 'vitest';\nit('holds', () => { expect(2).toBe(2); });\n",
  });
}, 60_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('formatDigest', () => {
  it('names each failed file and test with the start of its message, and counts what passed', () => {
    const digest = formatDigest([{ name: 'suite', report: failing }], join(dir, 'failing'));
    expect(digest).toMatch(/suite: FAILED: 1 of 3 tests passed, 1 failed; 2 of 2 files failed/);
    expect(digest).toContain('FAILED numbers.test.mjs');
    expect(digest).toContain('✗ multiplies wrongly');
    expect(digest).toMatch(/the product: expected 42 to be 41/);
    expect(digest).toContain('numbers.test.mjs:3');
    expect(digest).not.toContain('node_modules');
    expect(digest).not.toContain('✗ adds');
    expect(digest).toContain('FAILED hooks.test.mjs');
    expect(digest).toContain('the engine did not start');
  });

  it('says a group passed, and says so of a group that wrote no report that it failed', () => {
    const digest = formatDigest(
      [
        { name: 'installations', report: undefined },
        { name: 'suite', report: passing },
      ],
      dir,
    );
    expect(digest).toContain('installations: FAILED: it wrote no report');
    expect(digest).toContain('suite: passed: 1 of 1 tests passed, 0 failed; 0 of 1 files failed');
    expect(digest).not.toContain('✗');
  });

  it('keeps a long message to its first lines', () => {
    const long = Array.from({ length: 100 }, (_, i) => `line ${i}`).join('\n');
    const report: VitestJsonReport = {
      ...passing,
      success: false,
      numFailedTests: 1,
      testResults: [
        {
          name: join(dir, 'x.test.ts'),
          status: 'failed',
          message: '',
          assertionResults: [{ fullName: 'x', status: 'failed', failureMessages: [long] }],
        },
      ],
    };
    const digest = formatDigest([{ name: 'suite', report }], dir);
    expect(digest).toContain('line 24');
    expect(digest).not.toContain('line 25\n');
    expect(digest).toContain('75 more lines');
  });
});

describe('formatSlowest', () => {
  it('lists the slowest files of each group, collection and hooks included, slowest first, with the group total', () => {
    const time = (name: string, collectSeconds: number, runSeconds: number) => ({
      file: join(dir, name),
      project: 'integration',
      collectSeconds,
      runSeconds,
    });
    const times = [time('a.test.ts', 1, 1), time('b.test.ts', 0.25, 30), time('c.test.ts', 2, 5)];
    const lines = formatSlowest(
      [
        { name: 'suite', times },
        { name: 'installations', times: undefined },
      ],
      dir,
      2,
    ).split('\n');
    expect(lines).toContain('suite: 3 files, 39 s in all');
    expect(lines.filter((line) => line.includes('.test.ts'))).toEqual([
      '     30.3 s  (0.3 s collecting)  b.test.ts',
      '      7.0 s  (2.0 s collecting)  c.test.ts',
    ]);
    expect(lines.some((line) => line.startsWith('installations'))).toBe(false);
  });
});
