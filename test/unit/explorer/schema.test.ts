/** Profiles of a sample: kinds, coverage, ranges and distinct values per column, and suggested facets. */
import { describe, expect, it } from 'vitest';
import { Double, Int32 } from 'mongodb';
import { csvTypes, profileSample, suggestedFacets } from '../../../src/explorer/schema.js';

describe('profileSample', () => {
  const records = Array.from({ length: 10 }, (_, i) => ({
    _id: `r${i}`,
    kind: ['a', 'b'][i % 2],
    at: new Date(Date.UTC(2024, 0, 1 + i)),
    nested: { n: i },
    ...(i < 5 ? { some: i } : {}),
    mixed: i % 2 === 0 ? 1 : 'one',
  }));

  it('counts kinds, coverage, ranges and distinct values per column', () => {
    const profile = profileSample(records);
    const field = (name: string) => profile.fields.find((f) => f.column.name === name);
    expect(profile.sampleSize).toBe(10);
    expect(field('kind')).toMatchObject({ present: 10, distinct: 2 });
    expect(field('some')).toMatchObject({ present: 5, min: 0, max: 4 });
    expect(field('nested.n')).toMatchObject({ present: 10, min: 0, max: 9, distinct: 10 });
    expect(field('at')?.min).toEqual(new Date(Date.UTC(2024, 0, 1)));
    expect([...(field('mixed')?.kinds ?? [])]).toEqual([
      ['number', 5],
      ['text', 5],
    ]);
  });

  it('counts stored types, and names the columns a CSV reader should read as text or as dates', () => {
    const typed = Array.from({ length: 4 }, (_, i) => ({
      code: `00${i}`,
      at: new Date(i),
      temp: i < 3 ? new Double(i) : new Int32(i),
      maybe: i === 0 ? null : 'x',
    }));
    const profile = profileSample(typed);
    expect([...(profile.fields.find((f) => f.column.name === 'temp')?.types ?? [])]).toEqual([
      ['double', 3],
      ['int', 1],
    ]);
    expect(csvTypes(profile)).toEqual({ text: ['code', 'maybe'], dates: ['at'] });
  });

  it('suggests fields most records have with few repeated values', () => {
    expect(suggestedFacets(profileSample(records), [])).toEqual(['kind', 'mixed']);
    expect(suggestedFacets(profileSample(records), ['kind'])).toEqual(['mixed']);
  });
});
