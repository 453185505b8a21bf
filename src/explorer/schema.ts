/**
 * A collection's fields as a sample of its records shows them: per column (the table's dotted
 * columns), the kinds of value found and their stored BSON types, how many records have it, the smallest and largest number
 * or date, and how many distinct values the sample holds. Suggested facets are the fields with
 * few distinct values that most records have.
 */
import type { Document } from 'mongodb';
import { ColumnNames, forEachCell, type Column } from './columns.js';
import { bsonTag, kindOf, sameValueKey, storedType, type StoredType, type ValueKind } from './values.js';

export interface FieldProfile {
  column: Column;
  /** Records of the sample that have the field. */
  present: number;
  kinds: Map<ValueKind, number>;
  /** Records of the sample per stored BSON type (int, double, date, string ...), as the schema shows them. */
  types: Map<StoredType, number>;
  min?: number | Date;
  max?: number | Date;
  /** Distinct values in the sample (values compared as their JSON). */
  distinct: number;
}

export interface SchemaProfile {
  sampleSize: number;
  fields: FieldProfile[];
}

const MAX_SUGGESTED = 5;
/** A field with more distinct values than this in a sample is no facet to suggest (a station code among 40 still is). */
const MAX_FACET_DISTINCT = 50;

function comparable(value: unknown): number | Date | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? undefined : value;
  if (typeof value === 'object' && value !== null) {
    const tag = bsonTag(value);
    if (tag === 'Int32' || tag === 'Double' || tag === 'Long' || tag === 'Decimal128') {
      const n = Number(String(value));
      return Number.isFinite(n) ? n : undefined;
    }
  }
  return undefined;
}

export function profileSample(records: readonly Document[]): SchemaProfile {
  const byColumn = new Map<string, FieldProfile & { values: Set<string> }>();
  const names = new ColumnNames();
  const visit = (column: Column, value: unknown): void => {
    let profile = byColumn.get(column.name);
    if (profile === undefined) {
      profile = { column, present: 0, kinds: new Map(), types: new Map(), distinct: 0, values: new Set() };
      byColumn.set(column.name, profile);
    }
    profile.present += 1;
    const kind = kindOf(value);
    profile.kinds.set(kind, (profile.kinds.get(kind) ?? 0) + 1);
    const type = storedType(value);
    profile.types.set(type, (profile.types.get(type) ?? 0) + 1);
    const point = comparable(value);
    // Numbers and dates are each other's min/max only within one kind: the first kind met wins.
    if (point !== undefined && (profile.min === undefined || typeof profile.min === typeof point)) {
      if (profile.min === undefined || point < profile.min) profile.min = point;
      if (profile.max === undefined || point > profile.max) profile.max = point;
    }
    profile.values.add(sameValueKey(value));
  };
  for (const record of records) forEachCell(record, visit, names);
  const fields = [...byColumn.values()].map(({ values, ...profile }) => ({ ...profile, distinct: values.size }));
  return { sampleSize: records.length, fields };
}

/** Fields worth a facet: most records have them, with a handful of repeated values. */
export function suggestedFacets(profile: SchemaProfile, exclude: readonly string[]): string[] {
  return profile.fields
    .filter(
      ({ column, present, distinct, kinds }) =>
        column.field !== undefined &&
        column.field !== '_id' &&
        !exclude.includes(column.field) &&
        present >= profile.sampleSize / 2 &&
        distinct >= 2 &&
        distinct <= MAX_FACET_DISTINCT &&
        distinct < present &&
        [...kinds.keys()].every((kind) => kind === 'text' || kind === 'bool' || kind === 'number' || kind === 'null'),
    )
    .sort((a, b) => a.distinct - b.distinct)
    .slice(0, MAX_SUGGESTED)
    .map(({ column }) => column.field as string);
}

/** Fields (query paths) holding a GeoJSON geometry in some sampled record, most often found first. */
export function geometryFields(profile: SchemaProfile): string[] {
  return profile.fields
    .filter(({ column, kinds }) => column.field !== undefined && (kinds.get('geo') ?? 0) > 0)
    .sort((p, q) => (q.kinds.get('geo') ?? 0) - (p.kinds.get('geo') ?? 0))
    .map(({ column }) => column.field as string);
}

/** The histogram kind of a field: number or date when every value sampled that is either is of one kind. */
export function histogramKind(profile: SchemaProfile, field: string): 'number' | 'date' | undefined {
  const found = profile.fields.find((f) => f.column.field === field);
  if (found === undefined) return undefined;
  const numbers = found.kinds.get('number') ?? 0;
  const dates = found.kinds.get('date') ?? 0;
  if (numbers === 0 && dates === 0) return undefined;
  return numbers >= dates ? 'number' : 'date';
}

/** Number and date fields (not `_id`) worth a histogram: most sampled records have them. */
export function suggestedHistograms(profile: SchemaProfile, exclude: readonly string[]): string[] {
  return profile.fields
    .filter(
      ({ column, present, distinct }) =>
        column.field !== undefined &&
        column.field !== '_id' &&
        !exclude.includes(column.field) &&
        present >= profile.sampleSize / 2 &&
        distinct > 5,
    )
    .filter(({ column }) => histogramKind(profile, column.field as string) !== undefined)
    .slice(0, 6)
    .map(({ column }) => column.field as string);
}

/**
 * The columns a CSV reader should be told the type of: those the sample holds only text in (digits
 * with leading zeros, such as "00429", would otherwise be read as numbers) and those it holds only
 * dates in. Named as the CSV names its columns (the table's dotted names).
 */
export function csvTypes(profile: SchemaProfile): { text: string[]; dates: string[] } {
  // A null among the values does not make a column any less text (pandas reads an empty cell as missing either way).
  const only = (type: StoredType) =>
    profile.fields
      .filter(({ types }) => types.has(type) && [...types.keys()].every((found) => found === type || found === 'null'))
      .map(({ column }) => column.name);
  return { text: only('string'), dates: only('date') };
}
