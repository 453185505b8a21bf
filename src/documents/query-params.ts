/**
 * The collection view's URL parameters (`query`, `aggregate`, `distinct`) and record ids, parsed
 * once into typed values, plus the pipelines built from them. Everything here is pure; the
 * storage layer runs what these functions return.
 */
import { ObjectId } from 'mongodb';
import type { Document } from 'mongodb';
import { badRequest, uriTooLong } from '../errors.js';
import { parseJsonParam } from './extended-json.js';
import { assertFilterOperators, assertPipelineOperators, lookupTargets } from './operators.js';
import isPlainObject from 'is-plain-obj';

export interface CollectionQuery {
  filter: Document;
  /** Field → 0 or 1; absent when the caller gave none (or an empty one). */
  projection?: Document;
  /**
   * Field → 1 or -1, in the order given. Caveat of JS objects: integer-like keys ("2") are
   * iterated before the others whatever their position in the JSON text.
   */
  sort?: Document;
}

export const QUERY_KEYS: readonly string[] = ['filter', 'projection', 'sort'];
export const MAX_DISTINCT_FIELDS = 32;
export const MAX_RECORD_ID_BYTES = 1024;

const HEX24 = /^[0-9a-fA-F]{24}$/;

const isHexId = (v: unknown): v is string => typeof v === 'string' && HEX24.test(v);

/** An empty parameter (`?query=`, as an HTML form sends it) means "not given". */
const isBlank = (raw: string | undefined): raw is undefined => raw === undefined || raw.trim() === '';

function assertWithinLimit(raw: string, maxBytes: number, param: string): void {
  const bytes = Buffer.byteLength(raw, 'utf8');
  if (bytes > maxBytes) {
    throw uriTooLong(`The "${param}" parameter is ${bytes} bytes long; the limit is ${maxBytes} bytes.`);
  }
}

function describeType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return 'an object';
  return `a ${typeof v}`;
}

const quoteList = (items: readonly string[]): string => items.map((s) => `"${s}"`).join(', ');

/**
 * A field path as used in projection, sort and distinct: dot-separated, no empty segment, no
 * segment starting with "$" (that would be an operator or a variable), except the positional
 * "$" as the last segment where `allowPositional` (projections such as `{"tags.$": 1}`).
 */
function fieldPathProblem(path: string, allowPositional: boolean): string | undefined {
  if (path.length === 0) return 'is empty';
  if (path.includes('\0')) return 'contains a NUL character';
  const segments = path.split('.');
  for (const [i, segment] of segments.entries()) {
    if (segment.length === 0) return 'has an empty segment (a leading, trailing or doubled ".")';
    if (segment.startsWith('$') && !(allowPositional && segment === '$' && i === segments.length - 1 && i > 0)) {
      return 'must not start a segment with "$"';
    }
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// query

export function parseQuery(raw: string | undefined, maxBytes: number): CollectionQuery {
  if (isBlank(raw)) return { filter: {} };
  assertWithinLimit(raw, maxBytes, 'query');
  const parsed = parseJsonParam(raw, 'query');
  if (!isPlainObject(parsed)) {
    throw badRequest(
      'invalid_query',
      `The "query" parameter must be a JSON object with the keys ${quoteList(QUERY_KEYS)}; got ${describeType(parsed)}.`,
    );
  }
  const unknown = Object.keys(parsed).filter((k) => !QUERY_KEYS.includes(k));
  if (unknown.length > 0) {
    const noun = unknown.length === 1 ? 'key' : 'keys';
    throw badRequest(
      'invalid_query',
      `The "query" parameter has the unknown ${noun} ${quoteList(unknown)}; the allowed keys are ${quoteList(QUERY_KEYS)}.`,
      { keys: unknown },
    );
  }

  const query: CollectionQuery = { filter: parseFilter(parsed.filter) };
  const projection = parseProjection(parsed.projection);
  if (projection !== undefined) query.projection = projection;
  const sort = parseSort(parsed.sort);
  if (sort !== undefined) query.sort = sort;
  return query;
}

function parseFilter(value: unknown): Document {
  if (value === undefined) return {};
  if (!isPlainObject(value)) {
    throw badRequest('invalid_query', `The "filter" of the "query" parameter must be a JSON object; got ${describeType(value)}.`, {
      key: 'filter',
    });
  }
  assertFilterOperators(value, 'query');
  // Done here so every consumer (find, count, distinct, aggregate) gets the same _id semantics.
  return normaliseIdFilter(value);
}

function parseProjection(value: unknown): Document | undefined {
  if (value === undefined) return undefined;
  if (!isPlainObject(value)) {
    throw badRequest(
      'invalid_projection',
      `The "projection" of the "query" parameter must be a JSON object mapping field names to 0 or 1; got ${describeType(value)}.`,
    );
  }
  const projection: Document = {};
  for (const [field, flag] of Object.entries(value)) {
    const problem = fieldPathProblem(field, true);
    if (problem !== undefined) {
      throw badRequest('invalid_projection', `The projection field ${JSON.stringify(field)} ${problem}.`, { field });
    }
    if (flag !== 0 && flag !== 1 && flag !== true && flag !== false) {
      throw badRequest(
        'invalid_projection',
        `The projection value for "${field}" must be 0 or 1 (or false/true); got ${JSON.stringify(flag) ?? describeType(flag)}.`,
        { field },
      );
    }
    projection[field] = flag === 1 || flag === true ? 1 : 0;
  }
  assertProjectionConsistent(projection);
  return Object.keys(projection).length > 0 ? projection : undefined;
}

/** The two mistakes MongoDB would otherwise answer with a server error. */
function assertProjectionConsistent(projection: Document): void {
  // Only `_id` may be excluded in an inclusion projection.
  const entries = Object.entries(projection).filter(([field]) => field !== '_id');
  const included = entries.find(([, flag]) => flag === 1);
  const excluded = entries.find(([, flag]) => flag === 0);
  if (included && excluded) {
    throw badRequest(
      'invalid_projection',
      `The projection mixes inclusion and exclusion: "${included[0]}" is 1 but "${excluded[0]}" is 0. Use only 1s or only 0s (only "_id" may be 0 among 1s).`,
      { fields: [included[0], excluded[0]] },
    );
  }
  // "a" and "a.b" together is a path collision.
  const fields = new Set(Object.keys(projection));
  for (const field of fields) {
    let dot = field.indexOf('.');
    while (dot !== -1) {
      const prefix = field.slice(0, dot);
      if (fields.has(prefix)) {
        throw badRequest('invalid_projection', `The projection fields "${prefix}" and "${field}" overlap; name only one of them.`, {
          fields: [prefix, field],
        });
      }
      dot = field.indexOf('.', dot + 1);
    }
  }
}

function parseSort(value: unknown): Document | undefined {
  if (value === undefined) return undefined;
  if (!isPlainObject(value)) {
    throw badRequest(
      'invalid_sort',
      `The "sort" of the "query" parameter must be a JSON object mapping field names to 1 or -1; got ${describeType(value)}.`,
    );
  }
  const sort: Document = {};
  for (const [field, direction] of Object.entries(value)) {
    const problem = fieldPathProblem(field, false);
    if (problem !== undefined) throw badRequest('invalid_sort', `The sort field ${JSON.stringify(field)} ${problem}.`, { field });
    if (direction !== 1 && direction !== -1) {
      throw badRequest(
        'invalid_sort',
        `The sort direction for "${field}" must be 1 (ascending) or -1 (descending); got ${JSON.stringify(direction) ?? describeType(direction)}.`,
        { field },
      );
    }
    sort[field] = direction;
  }
  return Object.keys(sort).length > 0 ? sort : undefined;
}

// ---------------------------------------------------------------------------------------------
// aggregate

export function parseAggregate(raw: string | undefined, maxBytes: number): Document[] | undefined {
  if (isBlank(raw)) return undefined;
  assertWithinLimit(raw, maxBytes, 'aggregate');
  const parsed = parseJsonParam(raw, 'aggregate');
  if (!Array.isArray(parsed)) {
    throw badRequest('invalid_pipeline', `The "aggregate" parameter must be a JSON array of stages; got ${describeType(parsed)}.`);
  }
  parsed.forEach((stage: unknown, index) => {
    const keys = isPlainObject(stage) ? Object.keys(stage) : [];
    if (!isPlainObject(stage) || keys.length !== 1 || !keys[0]!.startsWith('$')) {
      const got = isPlainObject(stage) ? `an object with the keys ${quoteList(keys) || '(none)'}` : describeType(stage);
      throw badRequest(
        'invalid_pipeline',
        `The stage at index ${index} of the "aggregate" pipeline must be an object with exactly one key, the stage name (such as "$match"); got ${got}.`,
        { index },
      );
    }
  });
  const pipeline = parsed as Document[];
  assertPipelineOperators(pipeline, 'aggregate');
  // Refuses cross-database and malformed lookups now, as input errors, before any permission check.
  lookupTargets(pipeline);
  return pipeline;
}

/** The `query` filter, when there is one, runs first as a `$match`. */
export function buildAggregationPipeline(query: CollectionQuery | undefined, pipeline: Document[]): Document[] {
  if (query === undefined || Object.keys(query.filter).length === 0) return [...pipeline];
  return [{ $match: query.filter }, ...pipeline];
}

// ---------------------------------------------------------------------------------------------
// distinct

export function parseDistinct(raw: string | undefined): string[] | undefined {
  if (isBlank(raw)) return undefined;
  const fields = raw.split(',').map((f) => f.trim());
  if (fields.length > MAX_DISTINCT_FIELDS) {
    throw badRequest(
      'invalid_distinct',
      `The "distinct" parameter names ${fields.length} fields; at most ${MAX_DISTINCT_FIELDS} are allowed.`,
      { limit: MAX_DISTINCT_FIELDS },
    );
  }
  const seen = new Set<string>();
  for (const field of fields) {
    const problem = fieldPathProblem(field, false);
    if (problem !== undefined) {
      const shown =
        field === '' ? 'A field name in the "distinct" parameter' : `The field ${JSON.stringify(field)} in the "distinct" parameter`;
      throw badRequest('invalid_distinct', `${shown} ${problem}.`, { field });
    }
    if (seen.has(field)) throw badRequest('invalid_distinct', `The "distinct" parameter names "${field}" more than once.`, { field });
    seen.add(field);
  }
  return fields;
}

/** Group keys are generated (`f0`, `f1`, ...) because field paths with dots cannot be keys there. */
const groupKey = (index: number): string => `f${index}`;

/**
 * Distinct values (one field) or distinct combinations (several fields) as a pipeline, sorted so
 * paging is stable. Rows come back as `{_id: {f0, f1, ...}}`
 * and are mapped to results with `distinctRowToResult`. Arrays are grouped as whole values.
 * For a single field, documents lacking it are left out (as the `distinct` command does);
 * for several, a missing field is simply absent from that combination.
 * The caller appends `$skip`/`$limit` (or `$count`) for paging.
 */
export function buildDistinctPipeline(filter: Document, fields: string[]): Document[] {
  if (fields.length === 0) throw new Error('buildDistinctPipeline needs at least one field.');
  const conditions: Document[] = [];
  if (Object.keys(filter).length > 0) conditions.push(filter);
  if (fields.length === 1) conditions.push({ [fields[0]!]: { $exists: true } });

  const pipeline: Document[] = [];
  if (conditions.length === 1) pipeline.push({ $match: conditions[0] });
  if (conditions.length > 1) pipeline.push({ $match: { $and: conditions } });
  const id: Document = {};
  fields.forEach((field, i) => {
    id[groupKey(i)] = `$${field}`;
  });
  pipeline.push({ $group: { _id: id } }, { $sort: { _id: 1 } });
  return pipeline;
}

/** `{_id: {f0: 1, f1: "x"}}` → `{a: 1, "b.c": "x"}`; fields missing from the group are omitted. */
export function distinctRowToObject(row: Document, fields: string[]): Document {
  const id: unknown = row._id;
  const out: Document = {};
  if (!isPlainObject(id)) return out;
  fields.forEach((field, i) => {
    const key = groupKey(i);
    if (Object.hasOwn(id, key)) out[field] = id[key];
  });
  return out;
}

/** The result entry for one row: the bare value for a single field, an object for several. */
export function distinctRowToResult(row: Document, fields: string[]): unknown {
  if (fields.length === 1) return distinctRowToObject(row, fields)[fields[0]!] ?? null;
  return distinctRowToObject(row, fields);
}

// ---------------------------------------------------------------------------------------------
// _id handling

/**
 * A plain 24-hex string `_id` matches the ObjectId or the string (docs/api-behaviour.md): users
 * copy ids out of JSON output, where ObjectIds render as their hex. Applies to `_id: "<hex>"`,
 * and to `$eq`, `$ne`, `$in`, `$nin` (also under `$not`) on `_id`, at the top level and inside
 * `$and`/`$or`/`$nor`. Idempotent.
 */
export function normaliseIdFilter(filter: Document): Document {
  const out: Document = {};
  const extraAnd: Document[] = [];
  for (const [key, value] of Object.entries(filter)) {
    if (key === '_id') {
      if (isHexId(value)) {
        out._id = { $in: expandIds([value]) };
      } else if (isOperatorObject(value)) {
        const conditions = normaliseIdOperators(value);
        if (!Array.isArray(conditions)) out._id = conditions;
        else if (filter.$and === undefined || Array.isArray(filter.$and)) extraAnd.push(...conditions.map((c) => ({ _id: c })));
        else out._id = value; // an invalid $and next to it: the server reports that, leave _id alone
      } else {
        out._id = value;
      }
    } else if ((key === '$and' || key === '$or' || key === '$nor') && Array.isArray(value)) {
      out[key] = value.map((clause: unknown) => (isPlainObject(clause) ? normaliseIdFilter(clause) : clause));
    } else {
      out[key] = value;
    }
  }
  if (extraAnd.length > 0) out.$and = [...((out.$and as Document[] | undefined) ?? []), ...extraAnd];
  return out;
}

const isOperatorObject = (v: unknown): v is Record<string, unknown> =>
  isPlainObject(v) && Object.keys(v).length > 0 && Object.keys(v).every((k) => k.startsWith('$'));

/**
 * Rewrites each operator on its own. When two rewrites land on the same operator name
 * (`{$eq: hex, $in: [...]}` → two `$in`s) they cannot share one object, so the conditions are
 * returned separately for the caller to AND together.
 */
function normaliseIdOperators(ops: Record<string, unknown>): Document | Document[] {
  const parts: [string, unknown][] = Object.entries(ops).map(([op, operand]) => normaliseIdOperator(op, operand));
  const names = new Set(parts.map(([op]) => op));
  if (names.size === parts.length) return Object.fromEntries(parts);
  return parts.map(([op, operand]) => ({ [op]: operand }));
}

function normaliseIdOperator(op: string, operand: unknown): [string, unknown] {
  switch (op) {
    case '$eq':
      return isHexId(operand) ? ['$in', expandIds([operand])] : [op, operand];
    case '$ne':
      return isHexId(operand) ? ['$nin', expandIds([operand])] : [op, operand];
    case '$in':
    case '$nin':
      return Array.isArray(operand) ? [op, expandIds(operand)] : [op, operand];
    case '$not': {
      if (!isOperatorObject(operand)) return [op, operand];
      const inner = normaliseIdOperators(operand);
      // NOT(a AND b) cannot be split into an $and; keep the original in that rare case.
      return [op, Array.isArray(inner) ? operand : inner];
    }
    default:
      return [op, operand];
  }
}

/** Each hex string is preceded by its ObjectId, unless that ObjectId is already in the list. */
function expandIds(values: readonly unknown[]): unknown[] {
  const present = new Set(values.filter((v): v is ObjectId => v instanceof ObjectId).map((v) => v.toHexString()));
  const out: unknown[] = [];
  for (const value of values) {
    if (isHexId(value) && !present.has(value.toLowerCase())) {
      out.push(ObjectId.createFromHexString(value));
      present.add(value.toLowerCase());
    }
    out.push(value);
  }
  return out;
}

/** The `_id` values a `/<db>/<col>/<id>/` path can mean: the ObjectId (for 24 hex digits) and the string. */
export function recordIdCandidates(id: string): (ObjectId | string)[] {
  return isHexId(id) ? [ObjectId.createFromHexString(id), id] : [id];
}

export function validateRecordId(id: string): string {
  if (typeof id !== 'string' || id.length === 0) throw badRequest('invalid_id', 'The record id must not be empty.');
  if (id.includes('\0')) throw badRequest('invalid_id', `The record id ${JSON.stringify(id)} contains a NUL character.`);
  const bytes = Buffer.byteLength(id, 'utf8');
  if (bytes > MAX_RECORD_ID_BYTES) {
    throw badRequest('invalid_id', `The record id is ${bytes} bytes long; the limit is ${MAX_RECORD_ID_BYTES} bytes.`);
  }
  return id;
}
