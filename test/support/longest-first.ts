/**
 * Orders test files longest first, so that two workers end together instead of one running the
 * last long file alone. vitest's own order needs its cache of an earlier run in this checkout
 * (node_modules/.vite); a fresh clone has none, and falls back to file size, which puts short files
 * that start whole services (the Python client's pytest run, the Celery interop) last. So the order
 * comes from the run times recorded in ./file-durations.json (collection and every hook included,
 * as ./file-times.ts measures them); files not recorded yet go first, as vitest does with files it
 * has not seen. `npx tsx test/support/record-durations.ts` refreshes the record after a whole run.
 */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** Seconds per file, keyed `<project>:<path from the repository root>`. */
export type RecordedDurations = Record<string, number>;

export const DURATIONS_FILE = new URL('./file-durations.json', import.meta.url);

export function durationKey(project: string, root: string, file: string): string {
  return `${project}:${relative(root, file)}`;
}

function recorded(): RecordedDurations {
  try {
    return JSON.parse(readFileSync(DURATIONS_FILE, 'utf8')) as RecordedDurations;
  } catch {
    return {};
  }
}

export default class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const durations = recorded();
    const root = this.ctx.config.root;
    const seconds = (spec: TestSpecification): number =>
      durations[durationKey(spec.project.name, root, spec.moduleId)] ?? Number.POSITIVE_INFINITY;
    // The record decides; among files it gives the same time (or none) vitest's order holds.
    const ordered = await super.sort(files);
    return ordered
      .map((spec, index) => ({ spec, index, seconds: seconds(spec) }))
      .sort((a, b) => b.seconds - a.seconds || a.index - b.index)
      .map(({ spec }) => spec);
  }
}
