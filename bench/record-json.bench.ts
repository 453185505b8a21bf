/**
 * Micro-benchmark of reading a record body (no server): JSON.parse plus the Extended JSON revival,
 * as before number literals were typed, against parseRecordJson plus the same revival, for
 * bodies of 1,000 records without fractional literals (the fast path), with one double per
 * record, and with five. Prints milliseconds per body (median of RUNS) and the ratio.
 *
 *   npx tsx bench/record-json.bench.ts
 */
import { parseJsonBody } from '../src/documents/extended-json.js';
import { parseRecordJson } from '../src/documents/number-literals.js';

const RECORDS = 1000;
const RUNS = 40;

function body(doubles: number): string {
  const records = Array.from({ length: RECORDS }, (_, i) => {
    const fields = Array.from({ length: doubles }, (_, k) => `"d${k}": ${(i + k) % 7}.${(i * 7 + k) % 10}`).join(', ');
    return `{"n": ${i}, "site": "site-${i % 97}", "when": {"$date": "2023-11-14T22:13:20Z"}, "flag": true, "note": "${'x'.repeat(900)}"${doubles > 0 ? `, ${fields}` : ''}}`;
  });
  return `[${records.join(',')}]`;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function time(parse: (text: string) => unknown, text: string): number {
  for (let i = 0; i < 5; i += 1) parseJsonBody(parse(text));
  const samples: number[] = [];
  for (let i = 0; i < RUNS; i += 1) {
    const start = process.hrtime.bigint();
    parseJsonBody(parse(text));
    samples.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  return median(samples);
}

for (const doubles of [0, 1, 5]) {
  const text = body(doubles);
  const before = time((t) => JSON.parse(t), text);
  const after = time(parseRecordJson, text);
  process.stdout.write(
    `${RECORDS} records, ${doubles} double(s) each, ${(text.length / 1024).toFixed(0)} KiB: ` +
      `JSON.parse ${before.toFixed(2)} ms, parseRecordJson ${after.toFixed(2)} ms (x${(after / before).toFixed(2)})\n`,
  );
}

// What a reviver alone costs (the route Node >= 21 would offer with context.source): called for every value.
const text = body(1);
const plain = time((t) => JSON.parse(t), text);
const revived = time((t) => JSON.parse(t, (_key, value: unknown) => value), text);
process.stdout.write(
  `JSON.parse with an identity reviver: ${revived.toFixed(2)} ms vs ${plain.toFixed(2)} ms (x${(revived / plain).toFixed(2)})\n`,
);
