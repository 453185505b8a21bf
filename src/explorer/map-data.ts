/**
 * What the map tab draws: the GeoJSON geometry of each record read for it, points apart from
 * the other geometries (points may be many, and are clustered; lines and polygons are drawn
 * whole), each with the record's id as its row view's path segment. Values that are not GeoJSON
 * geometries are left out.
 */
import type { Document } from 'mongodb';
import { isGeoJson, pointOf } from './values.js';
import { recordIdSegment } from './table-view.js';

export interface MapData {
  field: string;
  /** [longitude, latitude, the record's id segment or null]. */
  points: [number, number, string | null][];
  shapes: { id: string | null; geometry: Document }[];
  /** More records matched than the map draws (it draws the first `limit`). */
  capped: boolean;
  limit: number;
}

/** The value at a dotted field path (GeoJSON fields are objects, so arrays along the way are not followed). */
function valueAt(record: Document, field: string): unknown {
  let value: unknown = record;
  for (const key of field.split('.')) {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
    value = (value as Document)[key];
  }
  return value;
}

/** The map's data from up to `limit + 1` records read in order (one more than drawn tells that there are more). */
export function mapData(records: readonly Document[], field: string, limit: number): MapData {
  const points: MapData['points'] = [];
  const shapes: MapData['shapes'] = [];
  for (const record of records.slice(0, limit)) {
    const value = valueAt(record, field);
    const id = recordIdSegment(record._id) ?? null;
    const point = pointOf(value);
    if (point !== undefined) points.push([point[0], point[1], id]);
    else if (isGeoJson(value)) shapes.push({ id, geometry: value });
  }
  return { field, points, shapes, capped: records.length > limit, limit };
}
