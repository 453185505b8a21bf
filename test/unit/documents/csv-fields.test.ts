import { describe, expect, it } from 'vitest';
import { parseCsvFields } from '../../../src/documents/csv-fields.js';
import { ApiError } from '../../../src/errors.js';

const codeOf = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    if (err instanceof ApiError) return `${err.status} ${err.code}`;
    throw err;
  }
  return 'accepted';
};

describe('the `fields` parameter', () => {
  it('reads comma-separated dotted paths in order', () => {
    expect(parseCsvFields('_id,loc.lat,name', 'csv')).toEqual(['_id', 'loc.lat', 'name']);
    expect(parseCsvFields(undefined, 'csv')).toBeUndefined();
  });

  it.each([
    ['', '400 invalid_fields'],
    ['a,,b', '400 invalid_fields'],
    ['a.', '400 invalid_fields'],
    ['.a', '400 invalid_fields'],
    ['a,a', '400 invalid_fields'],
    ['a\u0001', '400 invalid_fields'],
    ['a\\b', '400 invalid_fields'],
    ['a\\', '400 invalid_fields'],
  ])('refuses %j', (raw, expected) => {
    expect(codeOf(() => parseCsvFields(raw, 'csv'))).toBe(expected);
  });

  it('reads a backslash-escaped "." or "\\" as part of a key, as the CSV header writes it', () => {
    expect(parseCsvFields('a\\.b,a.b,c\\\\', 'csv')).toEqual(['a\\.b', 'a.b', 'c\\\\']);
  });

  it('is refused with formats that have no columns', () => {
    expect(codeOf(() => parseCsvFields('a', 'json'))).toBe('400 invalid_combination');
    expect(codeOf(() => parseCsvFields('a', 'ndjson'))).toBe('400 invalid_combination');
  });
});
