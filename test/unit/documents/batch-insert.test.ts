/** How an array insert is split into commands: equal commands of at most about INSERT_COMMAND_BYTES of text. */
import { describe, expect, it } from 'vitest';
import { INSERT_COMMAND_BYTES, recordsPerCommand } from '../../../src/documents/batch-insert.js';

const MB = INSERT_COMMAND_BYTES;

describe('recordsPerCommand', () => {
  it.each([
    // count, text bytes, records per command
    [10_000, undefined, 10_000],
    [10_000, MB, 10_000],
    [10_000, MB + 1, 5_000],
    [10_000, 10 * MB, 1_000],
    [10_001, 10 * MB, 1_001],
    [3, 15 * MB, 1],
    [1, 15 * MB, 1],
    [0, undefined, 1],
  ] as const)('%i records of %s bytes: %i a command', (count, bytes, expected) => {
    expect(recordsPerCommand(count, bytes)).toBe(expected);
  });

  it('never makes a command of more than about INSERT_COMMAND_BYTES of average records', () => {
    for (const [count, bytes] of [
      [4000, 4_200_000],
      [123, 9_999_999],
      [100_000, 16 * MB],
    ] as const) {
      const size = recordsPerCommand(count, bytes);
      expect((size * bytes) / count).toBeLessThanOrEqual(MB * 1.01);
    }
  });
});
