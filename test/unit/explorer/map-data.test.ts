/** The map's data from the records read for it, and the geometry fields found in a sample. */
import { ObjectId } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { mapData } from '../../../src/explorer/map-data.js';
import { geometryFields, profileSample } from '../../../src/explorer/schema.js';

const line = {
  type: 'LineString',
  coordinates: [
    [0, 0],
    [1, 1],
  ],
};
const polygon = {
  type: 'Polygon',
  coordinates: [
    [
      [0, 0],
      [1, 0],
      [1, 1],
      [0, 0],
    ],
  ],
};

describe('mapData', () => {
  it('keeps points apart from other geometries, with each record id, and leaves out what is not GeoJSON', () => {
    const oid = new ObjectId();
    const records = [
      { _id: oid, place: { at: { type: 'Point', coordinates: [-97.4, 35.2] } } },
      { _id: 'a-line', place: { at: line } },
      { _id: 'with/slash', place: { at: polygon } },
      { _id: 'not-geo', place: { at: { type: 'Point', coordinates: 'x' } } },
      { _id: 'array', place: [{ at: { type: 'Point', coordinates: [1, 2] } }] },
    ];
    expect(mapData(records, 'place.at', 10)).toEqual({
      field: 'place.at',
      points: [[-97.4, 35.2, oid.toHexString()]],
      shapes: [
        { id: 'a-line', geometry: line },
        { id: null, geometry: polygon },
      ],
      capped: false,
      limit: 10,
    });
  });

  it('draws at most the limit and says when more matched', () => {
    const records = Array.from({ length: 4 }, (_, i) => ({ _id: `r${i}`, loc: { type: 'Point', coordinates: [i, i] } }));
    const data = mapData(records, 'loc', 3);
    expect(data.points.map((p) => p[2])).toEqual(['r0', 'r1', 'r2']);
    expect(data.capped).toBe(true);
    expect(mapData(records.slice(0, 3), 'loc', 3).capped).toBe(false);
  });
});

describe('geometryFields', () => {
  it('finds the fields holding GeoJSON geometries, the most frequent first', () => {
    const records = Array.from({ length: 6 }, (_, i) => ({
      name: `n${i}`,
      loc: { type: 'Point', coordinates: [i, i] },
      ...(i < 2 ? { area: polygon } : {}),
      notGeo: { type: 'Feature', properties: {} },
    }));
    expect(geometryFields(profileSample(records))).toEqual(['loc', 'area']);
  });
});
