/**
 * The benchmarks' results as the manual's one table (docs/benchmarks.md, between the markers
 * below). `npm run bench:table` rewrites it from bench/results/; a unit test fails when the
 * table in the manual and the results differ in shape (rows or columns).
 */
import type { BenchResults, ResultRow } from './results.js';

export const TABLE_START = '<!-- results-table:start (npm run bench:table writes this table) -->';
export const TABLE_END = '<!-- results-table:end -->';
export const COLUMNS = ['Benchmark', 'What', 'Ours', 'Baseline', 'Ratio', 'Goal', 'Measured'] as const;

export function formatNumber(value: number): string {
  const abs = Math.abs(value);
  if (abs >= 100) return Math.round(value).toLocaleString('en-US');
  if (abs >= 10) return value.toFixed(1);
  return value.toFixed(2);
}

const cell = (text: string): string => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

function cells(bench: BenchResults, row: ResultRow): string[] {
  const baseline =
    row.baseline === undefined
      ? ''
      : row.baselineValue === undefined
        ? row.baseline
        : `${formatNumber(row.baselineValue)} ${row.unit}, ${row.baseline}`;
  return [
    `\`${bench.command}\``,
    row.what,
    `${formatNumber(row.ours)} ${row.unit}`,
    baseline,
    row.ratio === undefined ? '' : row.ratio.toFixed(2),
    row.goal ?? '',
    row.note === undefined ? row.measured : `${row.measured} (${row.note})`,
  ];
}

/** The table's lines (header, separator, one line per row), benchmarks in file-name order. */
export function renderTable(results: readonly BenchResults[]): string[] {
  const lines = [`| ${COLUMNS.join(' | ')} |`, `|${COLUMNS.map(() => '---').join('|')}|`];
  for (const bench of results) for (const row of bench.rows) lines.push(`| ${cells(bench, row).map(cell).join(' | ')} |`);
  return lines;
}

/** The table's lines as they stand in `page` (between the markers); null without the markers. */
export function tableIn(page: string): string[] | null {
  const start = page.indexOf(TABLE_START);
  const end = page.indexOf(TABLE_END);
  if (start === -1 || end === -1 || end < start) return null;
  return page
    .slice(start + TABLE_START.length, end)
    .split('\n')
    .filter((line) => line.startsWith('|'));
}

/** `page` with its table replaced by `table`. */
export function withTable(page: string, table: readonly string[]): string {
  const start = page.indexOf(TABLE_START);
  const end = page.indexOf(TABLE_END);
  if (start === -1 || end === -1 || end < start) throw new Error(`the page has no ${TABLE_START} … ${TABLE_END} markers`);
  return `${page.slice(0, start + TABLE_START.length)}\n\n${table.join('\n')}\n\n${page.slice(end)}`;
}

/** Splits a table line into its cells (an escaped `\|` stays inside its cell). */
export function splitRow(line: string): string[] {
  return line
    .trim()
    .replace(/^\||\|$/g, '')
    .split(/(?<!\\)\|/)
    .map((text) => text.trim());
}

/**
 * How the table in the manual differs in shape from the one the results make: its columns, its
 * rows, and which measurement each row is (the benchmark and what it measured). Figures are not
 * compared. Empty when they agree.
 */
export function shapeDifferences(expected: readonly string[], actual: readonly string[]): string[] {
  const problems: string[] = [];
  const [expectedHeader, actualHeader] = [expected[0], actual[0]];
  if (expectedHeader !== actualHeader) problems.push(`columns: expected ${expectedHeader ?? '(none)'}, found ${actualHeader ?? '(none)'}`);
  if (expected.length !== actual.length) problems.push(`rows: expected ${expected.length - 2}, found ${actual.length - 2}`);
  for (let i = 2; i < Math.min(expected.length, actual.length); i += 1) {
    const want = splitRow(expected[i] as string);
    const found = splitRow(actual[i] as string);
    if (found.length !== want.length) problems.push(`row ${i - 1}: ${found.length} cells, expected ${want.length}`);
    else if (want[0] !== found[0] || want[1] !== found[1])
      problems.push(`row ${i - 1}: ${found.slice(0, 2).join(' / ')}, expected ${want.slice(0, 2).join(' / ')}`);
  }
  return problems;
}
