/**
 * What the explorer reads, all through the documents layer's own reads (DocumentService), so the
 * caller's permissions, the query checks, the query time budget and the caller's share of heavy
 * reads apply exactly as they do to the API:
 * - a page of records (a find: filter, sort, skip, limit);
 * - the total, counted up to a cap (an aggregation `$match` + `$limit`), and given up on after a
 *   short wait, when the view says "more than N" instead;
 * - top values of chosen fields (`$sortByCount`, as many as the view shows and one more), one aggregation per field;
 * - a `$sample` of records, for the schema and for suggested facets;
 * - histograms of number and date fields (the range, then the count per bin: dates by calendar unit, with `$bucket`);
 * - the geometry of the first records, for the map;
 * - whether an index starts with a sort's field.
 */
import type { Document } from 'mongodb';
import type { Principal } from '../auth/principal.js';
import { DatabaseError } from '../db/errors.js';
import type { CollectionTarget, DocumentService, ReadCaller } from '../documents/document-service.js';
import type { CollectionQuery } from '../documents/query-params.js';
import type { BudgetedCursor } from '../documents/budgeted-cursor.js';
import { binWidth, binsFrom, calendarBins, calendarBinsFrom, type Histogram, type HistogramKind } from './histogram.js';
import { bsonTag } from './values.js';
import type { ChartPoint } from './chart-series.js';

/** Counting stops here: past it the view says "more than". */
export const COUNT_CAP = 100_000;
/** How long a page waits for its count before saying "more than" what it has seen. */
export const COUNT_WAIT_MS = 2_500;
export const SCHEMA_SAMPLE_SIZE = 1_000;

/** Who reads which collection: the principal and their share of reads. */
export interface ExplorerReader {
  principal: Principal;
  caller: ReadCaller;
  target: CollectionTarget;
}

/** A total: exact, or at least `n` (capped, or not counted in time). */
export type Total = { exact: true; n: number } | { exact: false; n: number; why: 'cap' | 'slow' | 'failed' };

export interface FacetValue {
  value: unknown;
  n: number;
}

export class ExplorerReads {
  constructor(readonly documents: DocumentService) {}

  /** The collection for a reader, after the read permission check (403/401 otherwise). */
  target(principal: Principal, db: string, col: string): CollectionTarget {
    return this.documents.target(principal, db, col, 'safe');
  }

  /**
   * The records of one page, decoded as the renderers decode them (a double stays a Double, so a
   * whole one is shown `21.0`); a first page that finds nothing checks that the collection exists (404).
   */
  async page(
    reader: ExplorerReader,
    query: CollectionQuery,
    skip: number,
    limit: number,
    decoding: Decoding = 'typed',
  ): Promise<Document[]> {
    const records = await this.documents.readCollection(reader.principal, reader.caller, reader.target, { query }, async (rows) => {
      if ('values' in rows) return [];
      return decodedRows(rows.open({ skip, limit }), decoding);
    });
    if (records.length === 0 && skip === 0) await reader.target.whenEmpty();
    return records;
  }

  /**
   * A page sorted up by `field` with the records that lack it (or hold null) after all the others,
   * as they are when sorted down, instead of before them: two reads, each served by an index on
   * the field where there is one. The records with a value fill the page first; the rest of it,
   * the records without, in `_id` order, skipping as many of them as earlier pages showed.
   */
  async pageMissingLast(
    reader: ExplorerReader,
    query: CollectionQuery & { sort: Document },
    field: string,
    skip: number,
    limit: number,
  ): Promise<Document[]> {
    const present = await this.page(reader, { ...query, filter: narrowed(query.filter, { [field]: { $ne: null } }) }, skip, limit);
    if (present.length === limit) return present;
    const before =
      present.length > 0
        ? skip + present.length
        : await this.documents.readCollection(
            reader.principal,
            reader.caller,
            reader.target,
            { query: { filter: narrowed(query.filter, { [field]: { $ne: null } }) } },
            async (rows) => ('values' in rows ? rows.values.length : rows.count),
          );
    const missing = await this.page(
      reader,
      { filter: narrowed(query.filter, { [field]: null }), sort: { _id: 1 } },
      Math.max(0, skip - before),
      limit - present.length,
    );
    return [...present, ...missing];
  }

  /** The number of records the filter matches, up to COUNT_CAP, or a lower bound when counting takes too long. */
  async total(reader: ExplorerReader, filter: Document, seen: number): Promise<Total> {
    const counting = this.documents.readCollection(
      reader.principal,
      reader.caller,
      reader.target,
      { query: { filter }, pipeline: [{ $limit: COUNT_CAP + 1 }] },
      async (rows) => ('values' in rows ? rows.values.length : rows.count),
    );
    // Still awaited by the read itself (which holds the caller's heavy slot until the engine is done).
    counting.catch(() => undefined);
    let timer: NodeJS.Timeout | undefined;
    const slow = new Promise<'slow'>((resolve) => {
      timer = setTimeout(() => resolve('slow'), COUNT_WAIT_MS);
    });
    try {
      const n = await Promise.race([counting, slow]);
      if (n === 'slow') return { exact: false, n: seen, why: 'slow' };
      return n > COUNT_CAP ? { exact: false, n: COUNT_CAP, why: 'cap' } : { exact: true, n };
    } catch (err) {
      if (err instanceof DatabaseError && err.kind === 'query_timeout') return { exact: false, n: seen, why: 'slow' };
      if (err instanceof DatabaseError) throw err;
      return { exact: false, n: seen, why: 'failed' };
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * The `size` most frequent values of each field among the records the filter matches, and one
   * more when there are more (one aggregation per field, in turn).
   */
  async facets(reader: ExplorerReader, filter: Document, fields: readonly string[], size: number): Promise<Map<string, FacetValue[]>> {
    const out = new Map<string, FacetValue[]>();
    for (const field of fields) {
      const pipeline = [{ $sortByCount: `$${field}` }, { $limit: size + 1 }];
      out.set(
        field,
        (await this.aggregate(reader, filter, pipeline, 'typed')).map((row) => ({ value: row._id, n: Number(row.count) })),
      );
    }
    return out;
  }

  /** Equal-width bins of a number or date field's values among the records the filter matches. */
  async histogram(reader: ExplorerReader, filter: Document, field: string, kind: HistogramKind): Promise<Histogram> {
    const ofKind = { $match: { [field]: { $type: kind === 'date' ? 'date' : 'number' } } };
    const [range] = await this.aggregate(reader, filter, [
      ofKind,
      { $group: { _id: null, min: { $min: `$${field}` }, max: { $max: `$${field}` }, n: { $sum: 1 } } },
    ]);
    const min = asNumber(range?.min);
    const max = asNumber(range?.max);
    if (range === undefined || min === undefined || max === undefined) return { field, kind, bins: [], total: 0 };
    const calendar = kind === 'date' ? calendarBins(min, max) : undefined;
    if (calendar !== undefined) {
      const rows = await this.aggregate(reader, filter, [
        ofKind,
        {
          $bucket: {
            groupBy: `$${field}`,
            boundaries: calendar.edges.map((edge) => new Date(edge)),
            default: 'outside',
            output: { n: { $sum: 1 } },
          },
        },
      ]);
      const counts = new Map<number, number>();
      for (const row of rows) {
        const edge = row._id instanceof Date ? row._id.getTime() : undefined;
        if (edge !== undefined) counts.set(edge, Number(row.n));
      }
      return { field, kind, unit: calendar.unit, bins: calendarBinsFrom(calendar.edges, counts), total: Number(range.n) };
    }
    const width = binWidth(min, max, kind === 'number' && Number.isInteger(min) && Number.isInteger(max));
    const origin = kind === 'date' ? new Date(min) : min;
    const rows = await this.aggregate(reader, filter, [
      ofKind,
      { $group: { _id: { $floor: { $divide: [{ $subtract: [`$${field}`, origin] }, width] } }, n: { $sum: 1 } } },
    ]);
    const counts = new Map<number, number>();
    for (const row of rows) {
      const bin = asNumber(row._id);
      if (bin !== undefined) counts.set(bin, (counts.get(bin) ?? 0) + Number(row.n));
    }
    return { field, kind, bins: binsFrom(min, max, width, counts), total: Number(range.n) };
  }

  /**
   * Up to `size` (x, y) points of records picked at random among those the filter matches that
   * have a number or date `x` and a number `y` (dates as seconds, for the chart), each with its
   * record's value of `by` when a split field is given.
   */
  async points(
    reader: ExplorerReader,
    filter: Document,
    x: string,
    xKind: HistogramKind,
    y: string,
    size: number,
    by = '',
  ): Promise<ChartPoint[]> {
    const rows = await this.aggregate(reader, filter, [
      { $match: { [x]: { $type: xKind === 'date' ? 'date' : 'number' }, [y]: { $type: 'number' } } },
      { $sample: { size } },
      { $project: { _id: 0, x: `$${x}`, y: `$${y}`, ...(by === '' ? {} : { g: `$${by}` }) } },
    ]);
    const points: ChartPoint[] = [];
    for (const row of rows) {
      const px = asNumber(row.x);
      const py = asNumber(row.y);
      if (px === undefined || py === undefined) continue;
      const point: ChartPoint = { x: xKind === 'date' ? px / 1000 : px, y: py };
      if ('g' in row) point.group = row.g;
      points.push(point);
    }
    return points;
  }

  /**
   * The `_id` and `field` of the first `limit` records the filter matches that have an object
   * there (a GeoJSON geometry, for the map), and one more when there are more: a find with a
   * projection, so only the geometry travels.
   */
  geometries(reader: ExplorerReader, filter: Document, field: string, limit: number): Promise<Document[]> {
    const query: CollectionQuery = { filter: withGeometry(filter, field), projection: { [field]: 1 } };
    return this.page(reader, query, 0, limit + 1, 'plain');
  }

  /** Up to `size` records picked at random among those the filter matches, their numbers as their BSON classes (for the schema's types). */
  sample(reader: ExplorerReader, filter: Document, size: number): Promise<Document[]> {
    return this.aggregate(reader, filter, [{ $sample: { size } }], 'typed');
  }

  /** The rows of a summary's pipeline (see summary-view.ts) over the records the filter matches. */
  summarize(reader: ExplorerReader, filter: Document, pipeline: Document[]): Promise<Document[]> {
    return this.aggregate(reader, filter, pipeline, 'typed');
  }

  /** Whether some index of the collection starts with `field` (a sort on it then reads no more than it returns). */
  async sortHasIndex(reader: ExplorerReader, field: string): Promise<boolean> {
    const indexes = await this.documents.listIndexes(reader.principal, reader.target.db, reader.target.col);
    return indexes.some((index) => Object.keys((index.key ?? {}) as Document)[0] === field);
  }

  private aggregate(reader: ExplorerReader, filter: Document, pipeline: Document[], decoding: Decoding = 'plain'): Promise<Document[]> {
    return this.documents.readCollection(reader.principal, reader.caller, reader.target, { query: { filter }, pipeline }, async (rows) => {
      if ('values' in rows) return [];
      return decodedRows(rows.open({ skip: 0, limit: 0 }), decoding);
    });
  }
}

/** The filter and a condition, both. */
function narrowed(filter: Document, condition: Document): Document {
  return Object.keys(filter).length === 0 ? condition : { $and: [filter, condition] };
}

/** The filter narrowed to records with an object (a GeoJSON geometry, for the map) in `field`. */
export function withGeometry(filter: Document, field: string): Document {
  const hasObject = { [field]: { $type: 'object' } };
  return Object.keys(filter).length === 0 ? hasObject : { $and: [filter, hasObject] };
}

/** A number or date from the engine as a number (a date as its milliseconds). */
function asNumber(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? undefined : value.getTime();
  if (typeof value === 'object' && value !== null && bsonTag(value) !== undefined) {
    const n = Number(String(value));
    return Number.isFinite(n) ? n : undefined;
  }
  return undefined;
}

/**
 * How records are decoded: `typed` keeps numbers as their BSON classes (Int32, Double, Long), as
 * shown and profiled; `plain` makes them JavaScript numbers, for arithmetic (ranges, points,
 * map coordinates).
 */
type Decoding = 'typed' | 'plain';

/** Every row of `cursor`, decoded; the cursor is closed whatever happens. */
async function decodedRows(cursor: BudgetedCursor, decoding: Decoding): Promise<Document[]> {
  const out: Document[] = [];
  try {
    for await (const row of cursor) out.push(decoding === 'typed' ? row.decodeTyped() : row.decode());
  } finally {
    await cursor.close();
  }
  return out;
}
