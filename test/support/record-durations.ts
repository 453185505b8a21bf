/**
 * Writes ./file-durations.json, the order ./longest-first.ts runs test files in, from the file
 * times of the last whole run (.cache/test-reports/*.times.json, written by ./file-times.ts).
 * Run after `npm test`: `npx tsx test/support/record-durations.ts`. Files that no longer exist
 * drop out; files the last run did not include keep their recorded time.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FileTime } from './file-times.js';
import { DURATIONS_FILE, durationKey, type RecordedDurations } from './longest-first.js';

const root = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const reports = join(root, '.cache/test-reports');

const previous: RecordedDurations = existsSync(DURATIONS_FILE)
  ? (JSON.parse(readFileSync(DURATIONS_FILE, 'utf8')) as RecordedDurations)
  : {};
const next: RecordedDurations = {};
for (const [key, seconds] of Object.entries(previous)) {
  if (existsSync(join(root, key.slice(key.indexOf(':') + 1)))) next[key] = seconds;
}
const timesFiles = existsSync(reports) ? readdirSync(reports).filter((name) => name.endsWith('.times.json')) : [];
if (timesFiles.length === 0) throw new Error(`no file times in ${reports}: run npm test first`);
for (const name of timesFiles) {
  for (const time of JSON.parse(readFileSync(join(reports, name), 'utf8')) as FileTime[]) {
    next[durationKey(time.project, root, time.file)] = Math.round((time.collectSeconds + time.runSeconds) * 10) / 10;
  }
}
const sorted = Object.fromEntries(Object.entries(next).sort(([a], [b]) => a.localeCompare(b)));
writeFileSync(DURATIONS_FILE, `${JSON.stringify(sorted, null, 2)}\n`);
console.log(`record-durations: ${Object.keys(sorted).length} files in ${fileURLToPath(DURATIONS_FILE)}`);
