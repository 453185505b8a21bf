/**
 * Writes the benchmarks' latest results (bench/results/*.json) into docs/benchmarks.md as its one
 * table. Run after a benchmark: `npm run bench:table`.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readResults } from './results.js';
import { renderTable, withTable } from './results-table.js';

const page = join(import.meta.dirname, '..', 'docs', 'benchmarks.md');
const table = renderTable(readResults());
writeFileSync(page, withTable(readFileSync(page, 'utf8'), table));
process.stdout.write(`${page}: ${table.length - 2} rows\n`);
