import { describe, expect, it } from 'vitest';
import { countableFilter } from '../../../src/documents/geo-count.js';

const point = { type: 'Point', coordinates: [10, 20] };
const within = (radians: number) => ({ $geoWithin: { $centerSphere: [[10, 20], radians] } });

describe('countableFilter', () => {
  it.each([
    ['a filter without $near, as it is', { a: 1, b: { $gt: 2 } }, { a: 1, b: { $gt: 2 } }],
    ['$near with a maximum in metres', { loc: { $near: { $geometry: point, $maxDistance: 6_378_100 } } }, { $and: [{ loc: within(1) }] }],
    [
      '$nearSphere with both distances',
      { loc: { $nearSphere: { $geometry: point, $maxDistance: 6_378_100, $minDistance: 3_189_050 } } },
      { $and: [{ loc: within(1) }, { $nor: [{ loc: within(0.5) }] }] },
    ],
    ['$near without a maximum: the whole sphere', { loc: { $near: { $geometry: point } } }, { $and: [{ loc: within(Math.PI) }] }],
    ['legacy $nearSphere pairs in radians', { loc: { $nearSphere: [10, 20], $maxDistance: 0.25 } }, { $and: [{ loc: within(0.25) }] }],
    [
      'other conditions kept beside it, and inside $and',
      { n: 1, $and: [{ loc: { $near: { $geometry: point, $maxDistance: 6_378_100 } } }] },
      { n: 1, $and: [{ $and: [{ loc: within(1) }] }] },
    ],
    [
      'legacy $near (planar units), left to the engine',
      { loc: { $near: [10, 20], $maxDistance: 2 } },
      { loc: { $near: [10, 20], $maxDistance: 2 } },
    ],
  ])('%s', (_name, filter, counted) => {
    expect(countableFilter(filter)).toEqual(counted);
  });

  it('returns the very filter when nothing changes (no copy on the common path)', () => {
    const filter = { a: { $in: [1, 2] } };
    expect(countableFilter(filter)).toBe(filter);
  });
});
