import { describe, expect, it } from 'vitest';
import {
  API_MALLOC_ARENAS,
  API_HEAP_GROWING_PERCENT,
  API_MALLOC_MMAP_THRESHOLD,
  API_SEMI_SPACE_MB,
  apiExecArgv,
  apiProcessEnv,
} from '../../../src/config/api-memory.js';

describe('API process memory settings', () => {
  it('caps the young generation and the growth of the old one unless the operator set them', () => {
    const semi = `--max-semi-space-size=${API_SEMI_SPACE_MB}`;
    const growing = `--heap-growing-percent=${API_HEAP_GROWING_PERCENT}`;
    expect(apiExecArgv(['--enable-source-maps'])).toEqual(['--enable-source-maps', semi, growing]);
    expect(apiExecArgv(['--max-semi-space-size=8'])).toEqual(['--max-semi-space-size=8', growing]);
    expect(apiExecArgv(['--max_semi_space_size', '8'])).toEqual(['--max_semi_space_size', '8', growing]);
    expect(apiExecArgv(['--heap-growing-percent=50'])).toEqual(['--heap-growing-percent=50', semi]);
    expect(apiExecArgv([], '--max-old-space-size=512 --max-semi-space-size=4')).toEqual([growing]);
    expect(apiExecArgv([], '--max-old-space-size=512')).toEqual([semi, growing]);
  });

  it('bounds the malloc arenas and fixes the mmap threshold unless the environment already does', () => {
    const mmap = { MALLOC_MMAP_THRESHOLD_: String(API_MALLOC_MMAP_THRESHOLD) };
    expect(apiProcessEnv({})).toEqual({ MALLOC_ARENA_MAX: String(API_MALLOC_ARENAS), ...mmap });
    expect(apiProcessEnv({ MALLOC_ARENA_MAX: '8' })).toEqual(mmap);
    expect(apiProcessEnv({ MALLOC_ARENA_MAX: '8', MALLOC_MMAP_THRESHOLD_: '131072' })).toEqual({});
  });

  it('starts Node with the flags it adds', async () => {
    // Node refuses an unknown or malformed flag at start-up: this keeps the flag's spelling honest.
    const { execFileSync } = await import('node:child_process');
    const out = execFileSync(process.execPath, [...apiExecArgv([]), '-p', "require('v8').getHeapStatistics().total_available_size > 0"], {
      encoding: 'utf8',
    });
    expect(out.trim()).toBe('true');
  });
});
