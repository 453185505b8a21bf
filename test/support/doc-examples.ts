/**
 * The manual's code blocks: README.md and every page under docs/. A block whose info string
 * carries a marker after its language is an executed example (see docs/architecture.md,
 * "Executed examples"); the runners and the check that no marker goes unrun read them from here.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

export const repoRoot = new URL('../..', import.meta.url).pathname;

/** Run with bash against the real server by test/integration/docs/shell-examples.test.ts. */
export const SHELL_EXAMPLE = 'example';
/** Run with Python in one namespace by clients/python/tests/integration/test_docs_examples.py. */
export const CLIENT_EXAMPLE = 'client-example';
/** The only files whose client examples that runner reads. */
export const CLIENT_EXAMPLE_FILES = ['README.md', 'docs/python-client.md'];
/**
 * The lab's task module, its updated version, and the submissions (`sh` with API and TOKEN set,
 * `python` with CYBERCOM_URL and CYBERCOM_TOKEN) of the page on Python tasks: run with
 * `cybercom worker` by test/integration/worker/python-worker.test.ts.
 */
export const LAB_TASK_MARKERS = ['task-module', 'task-module-update', 'task-submit'];
/** The only file whose lab-task examples that test reads. */
export const LAB_TASK_FILE = 'docs/python-tasks.md';

export interface CodeBlock {
  /** Path relative to the repository root. */
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  lang: string;
  /** The words after the language (VitePress's `{1,3}` line ranges left out). */
  markers: string[];
  code: string;
}

/** README.md first, then the manual's pages in path order (docs/.vitepress is the site's own). */
export function manualFiles(): string[] {
  const pages = readdirSync(join(repoRoot, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter((path) => path.endsWith('.md') && !path.split('/').some((part) => part.startsWith('.') || part === 'node_modules'))
    .map((path) => `docs/${path}`)
    .sort();
  return ['README.md', ...pages];
}

export function codeBlocks(file: string): CodeBlock[] {
  const lines = readFileSync(join(repoRoot, file), 'utf8').split('\n');
  const blocks: CodeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)(.*)$/.exec(lines[i] as string);
    if (open === null) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !(lines[i] as string).startsWith('```'); i++) body.push(lines[i] as string);
    const markers = (open[2] as string).split(/\s+/).filter((word) => word !== '' && !word.startsWith('{'));
    blocks.push({
      file: relative(repoRoot, join(repoRoot, file)),
      line: start + 1,
      lang: open[1] as string,
      markers,
      code: `${body.join('\n')}\n`,
    });
  }
  return blocks;
}

/** Every shell example of the manual, in the order they run. */
export function shellExamples(): CodeBlock[] {
  return manualFiles()
    .flatMap(codeBlocks)
    .filter((block) => block.lang === 'sh' && block.markers.includes(SHELL_EXAMPLE));
}
