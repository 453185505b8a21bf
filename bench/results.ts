/**
 * The benchmarks' latest results, one file per benchmark in bench/results/<bench>.json. A run
 * records the rows it measured: each replaces the row of the same name from an earlier run, and
 * rows it did not measure this time (a run with `--only`) are kept with their own date.
 * `npm run bench:table` writes them all into docs/benchmarks.md as one table (results-table.ts).
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const RESULTS_DIR = join(import.meta.dirname, 'results');

export interface ResultRow {
  /** The measurement, as the table names it. */
  what: string;
  ours: number;
  unit: string;
  /** What `ours` is compared with, and its value in the same run (same unit). */
  baseline?: string;
  baselineValue?: number;
  /** ours ÷ baseline; rates are better higher, times and memory lower (the goal says which). */
  ratio?: number;
  goal?: string;
  /** The day it was measured (YYYY-MM-DD); `before <day>` for a figure carried over from the manual's earlier tables. */
  measured: string;
  /** How the figure came about, when the run was not the usual one. */
  note?: string;
}

export interface BenchResults {
  bench: string;
  /** The command that measures it. */
  command: string;
  rows: ResultRow[];
}

function fileOf(bench: string, dir: string): string {
  return join(dir, `${bench}.json`);
}

export function readResults(dir = RESULTS_DIR): BenchResults[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => name.endsWith('.json'))
    .sort()
    .map((name) => JSON.parse(readFileSync(join(dir, name), 'utf8')) as BenchResults);
}

/** Collects a run's rows and writes them over the same rows of the last run. */
export class ResultsRecorder {
  private readonly rows: ResultRow[] = [];

  constructor(
    private readonly bench: string,
    private readonly command: string,
    private readonly dir = RESULTS_DIR,
  ) {}

  add(row: Omit<ResultRow, 'measured' | 'ratio'>): void {
    const ratio = row.baselineValue === undefined || row.baselineValue === 0 ? undefined : row.ours / row.baselineValue;
    this.rows.push({ ...row, ...(ratio === undefined ? {} : { ratio }), measured: new Date().toISOString().slice(0, 10) });
  }

  /** Writes the file and says where; nothing when the run measured no row. */
  save(): void {
    if (this.rows.length === 0) return;
    const file = fileOf(this.bench, this.dir);
    const last = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as BenchResults).rows : [];
    const fresh = new Map(this.rows.map((row) => [row.what, row]));
    const kept = last.map((row) => fresh.get(row.what) ?? row);
    const added = this.rows.filter((row) => !last.some((old) => old.what === row.what));
    mkdirSync(this.dir, { recursive: true });
    const results: BenchResults = { bench: this.bench, command: this.command, rows: [...kept, ...added] };
    writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
    process.stdout.write(`results written to ${file} (npm run bench:table puts them into docs/benchmarks.md)\n`);
  }
}
