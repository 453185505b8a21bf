/**
 * Counting what a `$near` / `$nearSphere` filter finds. A count runs its filter inside an
 * aggregation, where MongoDB (and the local engine) refuse both operators ("$geoNear, $near, and
 * $nearSphere are not allowed in this context"), so a page of such a query could not say how many
 * records match. The count asks instead for the records within the same distance of the same
 * point, `$geoWithin` a `$centerSphere`: the replacement MongoDB's own documentation gives for
 * counting near queries. `$near` only orders; the set it finds is the one within `$maxDistance`
 * (and beyond `$minDistance`), or every record with a geometry in the field when no maximum is
 * given (a sphere's whole surface: a radius of π).
 *
 * Only the counted filter changes; the records are read with the filter as given, nearest first.
 */
import type { Document } from 'mongodb';

/** The Earth's radius MongoDB uses to turn metres into the radians of `$centerSphere`. */
const EARTH_RADIUS_M = 6_378_100;
const WHOLE_SPHERE = Math.PI;
const NEAR_OPERATORS = new Set(['$near', '$nearSphere']);

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

interface NearQuery {
  center: unknown;
  /** Radians on the sphere. */
  max: number;
  min?: number;
}

const finite = (value: unknown): number | undefined => (typeof value === 'number' && Number.isFinite(value) ? value : undefined);

/**
 * The centre and radii of one field's near condition, or undefined when it is not a form this
 * can restate (left to the engine as it is).
 */
function nearQuery(condition: Record<string, unknown>): NearQuery | undefined {
  const operator = Object.keys(condition).find((key) => NEAR_OPERATORS.has(key));
  if (operator === undefined) return undefined;
  const spec = condition[operator];
  // GeoJSON: { $near: { $geometry: <Point>, $maxDistance: metres, $minDistance: metres } }.
  if (isObject(spec) && isObject(spec.$geometry)) {
    const max = finite(spec.$maxDistance);
    const min = finite(spec.$minDistance);
    return {
      center: (spec.$geometry as { coordinates?: unknown }).coordinates,
      max: max === undefined ? WHOLE_SPHERE : max / EARTH_RADIUS_M,
      ...(min === undefined ? {} : { min: min / EARTH_RADIUS_M }),
    };
  }
  // Legacy pairs with $nearSphere: distances already in radians, beside the operator.
  if (operator === '$nearSphere' && Array.isArray(spec)) {
    const max = finite(condition.$maxDistance);
    const min = finite(condition.$minDistance);
    return { center: spec, max: max ?? WHOLE_SPHERE, ...(min === undefined ? {} : { min }) };
  }
  return undefined;
}

function withinSphere(center: unknown, radians: number): Document {
  return { $geoWithin: { $centerSphere: [center, radians] } };
}

/** The conditions that count what `field: condition` finds (several, to be combined with $and). */
function countConditions(field: string, condition: unknown): Document[] | undefined {
  if (!isObject(condition)) return undefined;
  const near = nearQuery(condition);
  if (near === undefined) return undefined;
  const conditions: Document[] = [{ [field]: withinSphere(near.center, near.max) }];
  if (near.min !== undefined && near.min > 0) conditions.push({ $nor: [{ [field]: withinSphere(near.center, near.min) }] });
  return conditions;
}

/** The fields a filter's near conditions search (top level and in `$and`), each once. */
export function nearFields(filter: Document): string[] {
  const fields = new Set<string>();
  for (const [key, value] of Object.entries(filter)) {
    if (key === '$and' && Array.isArray(value))
      for (const part of value) if (isObject(part)) for (const f of nearFields(part)) fields.add(f);
    if (!key.startsWith('$') && isObject(value) && Object.keys(value).some((k) => NEAR_OPERATORS.has(k))) fields.add(key);
  }
  return [...fields];
}

/**
 * `filter` with each top-level (or `$and`-listed) near condition restated as the conditions that
 * count the same records; the filter itself when it has none.
 */
export function countableFilter(filter: Document): Document {
  let changed = false;
  const restated: Document[] = [];
  const rest: Document = {};
  for (const [key, value] of Object.entries(filter)) {
    if (key === '$and' && Array.isArray(value)) {
      const parts = value.map((part: unknown) => (isObject(part) ? countableFilter(part) : part));
      if (parts.some((part, i) => part !== value[i])) changed = true;
      rest.$and = parts;
      continue;
    }
    const conditions = key.startsWith('$') ? undefined : countConditions(key, value);
    if (conditions === undefined) rest[key] = value;
    else {
      changed = true;
      restated.push(...conditions);
    }
  }
  if (!changed) return filter;
  if (restated.length === 0) return rest;
  return { ...rest, $and: [...((rest.$and as Document[] | undefined) ?? []), ...restated] };
}
