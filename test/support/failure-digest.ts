/**
 * The end of `npm test`'s output: the slowest test files of each vitest process (where the
 * suite's time goes), then one line per process saying how it ended, then every failed test with
 * the start of its failure message. The test command runs several vitest processes
 * side by side and prints their outputs one after the other; a log viewer that keeps only the
 * end of a long output would otherwise show the one that passed and cut off the one that failed.
 *
 * Usage: tsx test/support/failure-digest.ts <name> <vitest json report> [<name> <report> ...]
 * (each report's file times, if any, are read from <report without .json>.times.json)
 */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { FileTime } from './file-times.js';

/** The parts of vitest's JSON report (`--reporter=json`) the digest reads. */
export interface VitestJsonReport {
  numTotalTests: number;
  numFailedTests: number;
  numPassedTests: number;
  success: boolean;
  testResults: Array<{
    name: string;
    status: string;
    message: string;
    assertionResults: Array<{ fullName: string; status: string; failureMessages: string[] | null }>;
  }>;
}

export interface GroupOutcome {
  name: string;
  /** Undefined when the process wrote no report (it crashed, or was killed, before the end). */
  report: VitestJsonReport | undefined;
}

/** Lines of one failure message kept in the digest: the assertion and the first frames. */
const MESSAGE_LINES = 25;

/** Stack frames of the test runner and of Node itself say nothing about the failure. */
const RUNNER_FRAME = /^\s+at (.*node_modules\/|.*node:internal\/|new Promise \(<anonymous>\))/;

const clip = (message: string): string => {
  const lines = message
    .trimEnd()
    .split('\n')
    .filter((line) => !RUNNER_FRAME.test(line));
  const kept = lines.slice(0, MESSAGE_LINES).map((line) => `      ${line}`);
  if (lines.length > MESSAGE_LINES) kept.push(`      … (${lines.length - MESSAGE_LINES} more lines above in this group's output)`);
  return kept.join('\n');
};

/** Files listed per group by formatSlowest. */
const SLOWEST_FILES = 10;

/** A group's file times (see ./file-times.ts); undefined when it wrote none. */
export interface GroupTimes {
  name: string;
  times: FileTime[] | undefined;
}

/** The `count` slowest files of each group (collection and every hook included), slowest first. */
export function formatSlowest(groups: GroupTimes[], root: string, count = SLOWEST_FILES): string {
  const out: string[] = ['', '==== slowest test files (seconds: collecting + running, hooks included) ===='];
  for (const { name, times } of groups) {
    if (times === undefined) continue;
    const files = times
      .map((t) => ({ file: relative(root, t.file), collect: t.collectSeconds, total: t.collectSeconds + t.runSeconds }))
      .sort((a, b) => b.total - a.total);
    const total = files.reduce((sum, { total: seconds }) => sum + seconds, 0);
    out.push(`${name}: ${files.length} files, ${total.toFixed(0)} s in all`);
    for (const { file, collect, total: seconds } of files.slice(0, count)) {
      out.push(`  ${seconds.toFixed(1).padStart(7)} s  (${collect.toFixed(1)} s collecting)  ${file}`);
    }
  }
  return out.join('\n');
}

export function formatDigest(groups: GroupOutcome[], root: string): string {
  const out: string[] = ['', '==== test digest ===='];
  for (const group of groups) {
    const { report } = group;
    if (report === undefined) {
      out.push(`${group.name}: FAILED: it wrote no report (it stopped before its end: see its output above)`);
      continue;
    }
    const failedFiles = report.testResults.filter((file) => file.status !== 'passed');
    out.push(
      `${group.name}: ${report.success ? 'passed' : 'FAILED'}: ${report.numPassedTests} of ${report.numTotalTests} tests passed, ` +
        `${report.numFailedTests} failed; ${failedFiles.length} of ${report.testResults.length} files failed`,
    );
    for (const file of failedFiles) {
      out.push(`  FAILED ${relative(root, file.name)}`);
      const failedTests = file.assertionResults.filter((test) => test.status === 'failed');
      // A file can fail with no failed test: an error in a hook or at load is the file's message.
      if (failedTests.length === 0 && file.message !== '') out.push(clip(file.message));
      for (const test of failedTests) {
        out.push(`    ✗ ${test.fullName}`);
        for (const message of test.failureMessages ?? []) out.push(clip(message));
      }
    }
    if (!report.success && report.numFailedTests === 0 && failedFiles.length === 0) {
      out.push('  no test failed, yet the run did not succeed (an error outside the tests: see its output above)');
    }
  }
  return out.join('\n');
}

function readJson<T>(file: string): T | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

/** Where test-groups.sh has the file times of the run whose JSON report is `report` written. */
export function timesFileOf(report: string): string {
  return report.replace(/\.json$/, '.times.json');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  // Arguments come in pairs: a group's name and its report file.
  const args = process.argv.slice(2);
  const groups: GroupOutcome[] = [];
  const times: GroupTimes[] = [];
  for (let i = 0; i + 1 < args.length; i += 2) {
    const [name, report] = [args[i] as string, args[i + 1] as string];
    groups.push({ name, report: readJson<VitestJsonReport>(report) });
    times.push({ name, times: readJson<FileTime[]>(timesFileOf(report)) });
  }
  console.log(formatSlowest(times, process.cwd()));
  console.log(formatDigest(groups, process.cwd()));
}
