import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import {
  API_HEAP_GROWING_PERCENT,
  API_MALLOC_ARENAS,
  API_MMAP_THRESHOLD_BYTES,
  API_SEMI_SPACE_MB,
  apiExecArgv,
  apiMemoryExports,
  apiProcessEnv,
  apiRuntimeFlags,
} from '../../../src/config/api-memory.js';

describe('API process memory settings', () => {
  it('caps the young generation unless the operator set it', () => {
    expect(apiExecArgv(['--enable-source-maps'])).toEqual(['--enable-source-maps', `--max-semi-space-size=${API_SEMI_SPACE_MB}`]);
    expect(apiExecArgv(['--max-semi-space-size=8'])).toEqual(['--max-semi-space-size=8']);
    expect(apiExecArgv(['--max_semi_space_size', '8'])).toEqual(['--max_semi_space_size', '8']);
    expect(apiExecArgv([], '--max-old-space-size=512 --max-semi-space-size=4')).toEqual([]);
    expect(apiExecArgv([], '--max-old-space-size=512')).toEqual([`--max-semi-space-size=${API_SEMI_SPACE_MB}`]);
  });

  it('bounds the malloc arenas and holds the mapping threshold, each unless the environment already does', () => {
    const threshold = String(API_MMAP_THRESHOLD_BYTES);
    expect(apiProcessEnv({})).toEqual({ MALLOC_ARENA_MAX: String(API_MALLOC_ARENAS), MALLOC_MMAP_THRESHOLD_: threshold });
    expect(apiProcessEnv({ MALLOC_ARENA_MAX: '8' })).toEqual({ MALLOC_MMAP_THRESHOLD_: threshold });
    expect(apiProcessEnv({ MALLOC_MMAP_THRESHOLD_: '65536' })).toEqual({ MALLOC_ARENA_MAX: String(API_MALLOC_ARENAS) });
    expect(apiProcessEnv({ MALLOC_ARENA_MAX: '8', MALLOC_MMAP_THRESHOLD_: '65536' })).toEqual({});
  });

  it("holds the old generation's growth unless the command line sets it", () => {
    expect(apiRuntimeFlags([])).toEqual([`--heap-growing-percent=${API_HEAP_GROWING_PERCENT}`]);
    expect(apiRuntimeFlags(['--enable-source-maps'])).toEqual([`--heap-growing-percent=${API_HEAP_GROWING_PERCENT}`]);
    expect(apiRuntimeFlags(['--heap-growing-percent=100'])).toEqual([]);
    expect(apiRuntimeFlags(['--heap_growing_percent', '100'])).toEqual([]);
  });

  it('names a flag Node knows, which then holds the old generation', () => {
    // Node refuses an unknown flag on its command line; set at run time, the flag must change
    // how far the old generation grows: garbage that lives past a few young collections is
    // collected by major collections many times more often.
    const script = `
      const v8 = require('v8');
      const { PerformanceObserver, constants } = require('perf_hooks');
      for (const flag of JSON.parse(process.argv[1])) v8.setFlagsFromString(flag);
      let majors = 0;
      new PerformanceObserver((list) => {
        for (const entry of list.getEntries()) if (entry.detail.kind === constants.NODE_PERFORMANCE_GC_MAJOR) majors += 1;
      }).observe({ entryTypes: ['gc'] });
      const kept = Array.from({ length: 200000 }, (_, i) => ({ i, s: 'x' + i }));
      const ring = [];
      for (let round = 0; round < 150; round++) ring[round % 6] = Array.from({ length: 30000 }, (_, i) => ({ i, s: 'y' + i, a: [i] }));
      setTimeout(() => console.log(majors, kept.length), 50);`;
    const majors = (flags: string[]): number =>
      Number(
        execFileSync(process.execPath, ['--max-semi-space-size=8', '-e', script, JSON.stringify(flags)], { encoding: 'utf8' }).split(
          ' ',
        )[0],
      );
    execFileSync(process.execPath, [...apiRuntimeFlags([]), '-e', '0']);
    expect(majors(apiRuntimeFlags([]))).toBeGreaterThan(2 * majors([]));
  });

  it('starts Node with the flag it adds', async () => {
    // Node refuses an unknown or malformed flag at start-up: this keeps the flag's spelling honest.
    const { execFileSync } = await import('node:child_process');
    const out = execFileSync(process.execPath, [...apiExecArgv([]), '-p', "require('v8').getHeapStatistics().total_available_size > 0"], {
      encoding: 'utf8',
    });
    expect(out.trim()).toBe('true');
  });
});

describe('the memory settings as shell exports (the API image starts through them)', () => {
  /** What a POSIX shell has in its environment after evaluating the lines. */
  function evaluated(lines: string[], env: Record<string, string>): { nodeOptions: string; arenas: string; mmapThreshold: string } {
    const print = `printf '%s\\n%s\\n%s' "\${NODE_OPTIONS-}" "\${MALLOC_ARENA_MAX-}" "\${MALLOC_MMAP_THRESHOLD_-}"`;
    const out = execFileSync('sh', ['-c', `${lines.join('\n')}\n${print}`], {
      env: { PATH: process.env.PATH, ...env },
      encoding: 'utf8',
    });
    const [nodeOptions = '', arenas = '', mmapThreshold = ''] = out.split('\n');
    return { nodeOptions, arenas, mmapThreshold };
  }

  it('sets all when the environment sets none', () => {
    expect(evaluated(apiMemoryExports({}), {})).toEqual({
      nodeOptions: `--max-semi-space-size=${API_SEMI_SPACE_MB}`,
      arenas: String(API_MALLOC_ARENAS),
      mmapThreshold: String(API_MMAP_THRESHOLD_BYTES),
    });
  });

  it("keeps the operator's other Node options, quotes included, and adds the flag after them", () => {
    const env = { NODE_OPTIONS: `--max-old-space-size=512 --title='it''s'` };
    expect(evaluated(apiMemoryExports(env), env).nodeOptions).toBe(
      `--max-old-space-size=512 --title='it''s' --max-semi-space-size=${API_SEMI_SPACE_MB}`,
    );
  });

  it("leaves the operator's own values alone", () => {
    const env = { NODE_OPTIONS: '--max-semi-space-size=16', MALLOC_ARENA_MAX: '4', MALLOC_MMAP_THRESHOLD_: '65536' };
    expect(apiMemoryExports(env)).toEqual([]);
    expect(evaluated(apiMemoryExports(env), env)).toEqual({ nodeOptions: '--max-semi-space-size=16', arenas: '4', mmapThreshold: '65536' });
  });
});
