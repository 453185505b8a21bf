/**
 * Every marked code block of the manual is one that a runner executes: a misspelt marker, or a
 * client example in a file the Python runner does not read, would otherwise turn a documented
 * example into an unchecked one without anyone noticing.
 */
import { describe, expect, it } from 'vitest';
import { CLIENT_EXAMPLE, CLIENT_EXAMPLE_FILES, SHELL_EXAMPLE, codeBlocks, manualFiles, shellExamples } from '../../support/doc-examples.js';

const blocks = manualFiles().flatMap(codeBlocks);

describe('the manual\'s executed examples', () => {
  it('reads the README and the pages under docs/', () => {
    const files = manualFiles();
    expect(files[0]).toBe('README.md');
    expect(files).toContain('docs/using-the-api.md');
    expect(files).toContain('docs/python-client.md');
    expect(files.some((file) => file.includes('.vitepress'))).toBe(false);
  });

  it('marks shell examples only as `sh example`', () => {
    const marked = blocks.filter((block) => block.markers.includes(SHELL_EXAMPLE));
    expect(marked.map((block) => `${block.file}:${block.line} ${block.lang}`).filter((where) => !where.endsWith(' sh'))).toEqual([]);
    expect(shellExamples().length).toBeGreaterThanOrEqual(10);
  });

  it('keeps client examples to Python, in the files the client test reads', () => {
    const marked = blocks.filter((block) => block.markers.includes(CLIENT_EXAMPLE));
    const misplaced = marked.filter((block) => block.lang !== 'python' || !CLIENT_EXAMPLE_FILES.includes(block.file));
    expect(misplaced.map((block) => `${block.file}:${block.line}`)).toEqual([]);
    expect(marked.some((block) => block.file === 'README.md')).toBe(true);
  });

  it('knows every marker used', () => {
    const unknown = blocks.flatMap((block) =>
      block.markers.filter((marker) => marker !== SHELL_EXAMPLE && marker !== CLIENT_EXAMPLE).map((marker) => `${block.file}:${block.line} ${marker}`),
    );
    expect(unknown).toEqual([]);
  });
});
