/**
 * Every marked code block of the manual is one that a runner executes: a misspelt marker, or a
 * client example in a file the Python runner does not read, would otherwise turn a documented
 * example into an unchecked one without anyone noticing.
 */
import { describe, expect, it } from 'vitest';
import {
  CLIENT_EXAMPLE,
  CLIENT_EXAMPLE_FILES,
  LAB_TASK_FILE,
  LAB_TASK_MARKERS,
  SHELL_EXAMPLE,
  codeBlocks,
  manualFiles,
  shellExamples,
} from '../../support/doc-examples.js';

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

  it('keeps lab-task examples to the page on Python tasks: a module of each kind and submissions in sh and Python', () => {
    const marked = blocks.filter((block) => block.markers.some((marker) => LAB_TASK_MARKERS.includes(marker)));
    expect(marked.filter((block) => block.file !== LAB_TASK_FILE).map((block) => `${block.file}:${block.line}`)).toEqual([]);
    const kinds = marked.map((block) => `${block.markers.join(' ')} ${block.lang}`);
    expect(kinds.filter((kind) => kind === 'task-module python')).toHaveLength(1);
    expect(kinds.filter((kind) => kind === 'task-module-update python')).toHaveLength(1);
    expect(kinds).toContain('task-submit sh');
    expect(kinds).toContain('task-submit python');
  });

  it('knows every marker used', () => {
    const unknown = blocks.flatMap((block) =>
      block.markers
        .filter((marker) => marker !== SHELL_EXAMPLE && marker !== CLIENT_EXAMPLE && !LAB_TASK_MARKERS.includes(marker))
        .map((marker) => `${block.file}:${block.line} ${marker}`),
    );
    expect(unknown).toEqual([]);
  });
});
