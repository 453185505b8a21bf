/**
 * A vitest reporter that writes how long each test file took, hooks and collection included,
 * to the file TEST_FILE_TIMES names (nothing without it): vitest's JSON report only spans a
 * file's first test to its last, which leaves out the start-up of services in `beforeAll` and the
 * teardown in `afterAll`, often most of a file's time. test-groups.sh passes it to both of its
 * vitest processes, and failure-digest.ts lists the slowest files from what it wrote.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';

export interface FileTime {
  /** The test file's absolute path. */
  file: string;
  project: string;
  /** Importing the file and collecting its tests, in seconds. */
  collectSeconds: number;
  /** Running it, every hook included, in seconds. */
  runSeconds: number;
}

export default class FileTimesReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const output = process.env.TEST_FILE_TIMES;
    if (!output) return;
    const times: FileTime[] = testModules.map((module) => {
      const diagnostic = module.diagnostic();
      return {
        file: module.moduleId,
        project: module.project.name,
        collectSeconds: diagnostic.collectDuration / 1000,
        runSeconds: diagnostic.duration / 1000,
      };
    });
    mkdirSync(dirname(output), { recursive: true });
    writeFileSync(output, `${JSON.stringify(times, null, 2)}\n`);
  }
}
