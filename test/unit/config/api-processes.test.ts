import { describe, expect, it } from 'vitest';
import { apiProcessesReason, defaultApiProcesses } from '../../../src/config/api-processes.js';

const GiB = 1024 ** 3;

describe('defaultApiProcesses', () => {
  it.each([
    // cores, memory, processes
    [2, 24 * GiB, 1],
    [3, 24 * GiB, 2],
    [16, 4 * GiB, 4],
    [8, 8.5 * GiB, 7],
    [9, 8.5 * GiB, 8],
    [4, 0.5 * GiB, 1],
    [1, 64 * GiB, 1],
  ])('%i cores and %f bytes -> %i', (cores, memory, expected) => {
    expect(defaultApiProcesses(cores, memory)).toBe(expected);
  });

  it('says which of the two limits chose the number', () => {
    expect(apiProcessesReason(2, 24 * GiB)).toBe('one per core but one, left to the database and the broker (2 cores, 24.0 GiB)');
    expect(apiProcessesReason(16, 4 * GiB)).toBe('limited by memory: 4.0 GiB, one process per GiB');
  });
});
