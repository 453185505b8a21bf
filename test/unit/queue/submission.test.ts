import { describe, expect, it } from 'vitest';
import { parseSubmission, parseWait, validateTaskName } from '../../../src/queue/api/submission.js';
import { ApiError } from '../../../src/errors.js';

function code(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    return e instanceof ApiError ? `${e.status} ${e.code}` : 'other';
  }
  return undefined;
}

describe('parseSubmission', () => {
  it('fills defaults and de-duplicates tags', () => {
    expect(parseSubmission({ function: 'tasks.add', args: [1, 2], tags: ['a', 'a', 'b'] }, 'tasks.add')).toEqual({
      args: [1, 2],
      kwargs: {},
      tags: ['a', 'b'],
      queue: undefined,
    });
    expect(parseSubmission({ function: 't', queue: 'celery', kwargs: { x: 1 } }, 't').queue).toBe('celery');
  });

  it.each([
    ['function missing', { args: [] }, '400 function_mismatch'],
    ['function different', { function: 'u' }, '400 function_mismatch'],
    ['args object', { function: 't', args: {} }, '400 invalid_args'],
    ['args string', { function: 't', args: '1,2' }, '400 invalid_args'],
    ['kwargs array', { function: 't', kwargs: [] }, '400 invalid_kwargs'],
    ['kwargs null', { function: 't', kwargs: null }, '400 invalid_kwargs'],
    ['tags not array', { function: 't', tags: 'x' }, '400 invalid_tags'],
    ['tags with number', { function: 't', tags: ['x', 1] }, '400 invalid_tags'],
    ['empty tag', { function: 't', tags: [''] }, '400 invalid_tags'],
    ['too many tags', { function: 't', tags: Array.from({ length: 51 }, (_, i) => `t${i}`) }, '400 invalid_tags'],
    ['queue number', { function: 't', queue: 5 }, '400 invalid_queue'],
    ['queue with slash', { function: 't', queue: 'a/b' }, '400 invalid_queue'],
  ])('%s → %s', (_name, body, expected) => {
    expect(code(() => parseSubmission(body, 't'))).toBe(expected);
  });
});

describe('parseWait and validateTaskName', () => {
  it('accepts seconds up to the cap', () => {
    expect(parseWait(undefined, 300)).toBeUndefined();
    expect(parseWait('2.5', 300)).toBe(2.5);
    expect(parseWait('300', 300)).toBe(300);
    expect(code(() => parseWait('301', 300))).toBe('400 invalid_wait');
    expect(code(() => parseWait('-1', 300))).toBe('400 invalid_wait');
    expect(code(() => parseWait('1e3', 300))).toBe('400 invalid_wait');
    expect(code(() => parseWait(['1', '2'], 300))).toBe('400 invalid_wait');
  });

  it('takes Celery-style dotted names only', () => {
    expect(validateTaskName('proj.tasks.add')).toBe('proj.tasks.add');
    for (const bad of ['', '$x', '.a', 'a b', 'a/b', 'x'.repeat(201)]) {
      expect(
        code(() => validateTaskName(bad)),
        bad,
      ).toBe('400 invalid_task_name');
    }
  });
});
