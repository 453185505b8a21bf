import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { envProblems, parseBoolean, setVariables } from '../../../src/config/env-values.js';

describe('parseBoolean (settings and installer flags alike)', () => {
  it.each([
    ['true', true],
    ['YES', true],
    [' on ', true],
    ['1', true],
    ['false', false],
    ['No', false],
    ['off', false],
    ['0', false],
  ])('%j is %s', (text, expected) => {
    expect(parseBoolean(text)).toBe(expected);
  });

  it.each(['', 'maybe', '2', 'truthy'])('%j is neither', (text) => {
    expect(parseBoolean(text)).toBeUndefined();
  });
});

describe('setVariables and envProblems', () => {
  it('counts empty variables as unset', () => {
    expect(setVariables({ A: '1', B: '', C: undefined })).toEqual({ A: '1' });
  });

  it('names the variable of each problem', () => {
    const result = z.object({ PORT: z.coerce.number().int() }).safeParse({ PORT: 'x' });
    expect(result.success).toBe(false);
    if (!result.success) expect(envProblems(result.error)).toEqual([expect.stringMatching(/^PORT: /)]);
  });
});
