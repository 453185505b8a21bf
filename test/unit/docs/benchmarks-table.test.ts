import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { readResults } from '../../../bench/results.js';
import { renderTable, shapeDifferences, splitRow, tableIn, withTable } from '../../../bench/results-table.js';

const PAGE = 'docs/benchmarks.md';

describe('the benchmarks table in the manual', () => {
  it('has the shape of the last results (npm run bench:table rewrites it)', () => {
    const table = tableIn(readFileSync(PAGE, 'utf8'));
    expect(table, `${PAGE} has no results table markers`).not.toBeNull();
    expect(shapeDifferences(renderTable(readResults()), table ?? [])).toEqual([]);
  });

  it('holds a row for every result recorded', () => {
    const rows = readResults().reduce((n, bench) => n + bench.rows.length, 0);
    expect(rows).toBeGreaterThan(0);
    expect((tableIn(readFileSync(PAGE, 'utf8')) ?? []).length - 2).toBe(rows);
  });
});

describe('comparing a table with the results', () => {
  const results = [
    {
      bench: 'documents',
      command: 'npm run bench',
      rows: [
        { what: '(d) one record', ours: 730, unit: 'req/s', baseline: 'plain', baselineValue: 941, ratio: 0.776, measured: '2026-01-01' },
        { what: '(b) whole | collection', ours: 3.1, unit: 's', measured: '2026-01-01', note: 'by hand' },
      ],
    },
  ];
  const table = renderTable(results);

  it('renders one line per row after the header, escaping a | inside a cell', () => {
    expect(table).toHaveLength(4);
    expect(splitRow(table[2] as string)).toEqual(['`npm run bench`', '(d) one record', '730 req/s', '941 req/s, plain', '0.78', '', '2026-01-01']);
    expect(splitRow(table[3] as string)[1]).toBe('(b) whole \\| collection');
    expect(splitRow(table[3] as string)[6]).toBe('2026-01-01 (by hand)');
  });

  it('accepts other figures in the same shape', () => {
    const rerun = renderTable([{ ...results[0]!, rows: results[0]!.rows.map((row) => ({ ...row, ours: row.ours * 2 })) }]);
    expect(shapeDifferences(table, rerun)).toEqual([]);
  });

  it('names a missing row, a renamed measurement and changed columns', () => {
    expect(shapeDifferences(table, table.slice(0, 3))).toEqual(['rows: expected 2, found 1']);
    const renamed = [...table.slice(0, 3), (table[3] as string).replace('(b) whole', '(b) all')];
    expect(shapeDifferences(table, renamed)[0]).toMatch(/^row 2: .*\(b\) all/);
    expect(shapeDifferences(table, ['| Benchmark | What |', ...table.slice(1)])[0]).toMatch(/^columns:/);
  });

  it('replaces only what lies between the markers', () => {
    const page = withTable(`# B\n\n<!-- results-table:start (npm run bench:table writes this table) -->\nold\n<!-- results-table:end -->\nafter\n`, table);
    expect(tableIn(page)).toEqual(table);
    expect(page.endsWith('<!-- results-table:end -->\nafter\n')).toBe(true);
  });
});
