import { describe, expect, it } from 'vitest';
import { API_MALLOC_ARENAS, API_SEMI_SPACE_MB, apiExecArgv, apiProcessEnv } from '../../../src/config/api-memory.js';

describe('API process memory settings', () => {
  it('caps the young generation unless the operator set it', () => {
    expect(apiExecArgv(['--enable-source-maps'])).toEqual(['--enable-source-maps', `--max-semi-space-size=${API_SEMI_SPACE_MB}`]);
    expect(apiExecArgv(['--max-semi-space-size=8'])).toEqual(['--max-semi-space-size=8']);
    expect(apiExecArgv(['--max_semi_space_size', '8'])).toEqual(['--max_semi_space_size', '8']);
    expect(apiExecArgv([], '--max-old-space-size=512 --max-semi-space-size=4')).toEqual([]);
    expect(apiExecArgv([], '--max-old-space-size=512')).toEqual([`--max-semi-space-size=${API_SEMI_SPACE_MB}`]);
  });

  it('bounds the malloc arenas unless the environment already does', () => {
    expect(apiProcessEnv({})).toEqual({ MALLOC_ARENA_MAX: String(API_MALLOC_ARENAS) });
    expect(apiProcessEnv({ MALLOC_ARENA_MAX: '8' })).toEqual({});
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
