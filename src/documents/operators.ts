/**
 * Operator policy for user-supplied filters and pipelines: operators that write elsewhere or run
 * server-side JavaScript are refused, and every collection a pipeline reads besides its own is
 * listed so the caller can check read permission on each before anything runs.
 */
import type { Document } from 'mongodb';
import { badRequest } from '../errors.js';
import { validateCollectionName } from '../db/names.js';
import { assertAllowedStage } from './pipeline-stages.js';
import isPlainObject from 'is-plain-obj';

/** `$out`/`$merge` write to other collections; the rest execute JavaScript on the server. */
export const FORBIDDEN_OPERATORS: readonly string[] = ['$out', '$merge', '$where', '$function', '$accumulator'];

/**
 * Throws when a forbidden operator appears as a key anywhere in `value`. Only keys count: the
 * string "$out" as a value is a field path reference (`{$group: {_id: "$out"}}`), not an operator.
 * BSON values (ObjectId, Date, ...) are not plain objects and are not descended into.
 * `where` names the parameter in the message ("query", "aggregate").
 */
export function assertNoForbiddenOperators(value: unknown, where: string): void {
  // Iterative: the input is user-controlled and may be deeply nested.
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const current = stack.pop();
    if (Array.isArray(current)) {
      for (const item of current) if (typeof item === 'object') stack.push(item); // not push(...current): huge arrays overflow the argument limit
    } else if (isPlainObject(current)) {
      for (const key of Object.keys(current)) {
        // Every forbidden operator starts with '$' (char code 36): other keys need no lookup.
        if (key.charCodeAt(0) === 36 && FORBIDDEN_OPERATORS.includes(key)) {
          throw badRequest('forbidden_operator', `Operator "${key}" is not allowed in ${where}.`, { operator: key });
        }
        const child = current[key];
        if (typeof child === 'object') stack.push(child);
      }
    }
  }
}

/**
 * The operator rules of a filter, wherever a user writes one: the `filter` of a `query`, and an
 * index's `partialFilterExpression` (the rules of a `$match` stage come with the pipeline's, see
 * assertPipelineOperators). `where` names it in messages.
 */
export function assertFilterOperators(filter: Document, where: string): void {
  assertNoForbiddenOperators(filter, where);
  assertTextAtTop(filter, where);
}

/** The operator rules of a pipeline: no forbidden operator anywhere, and each `$match`, at any depth, by the filter rules. */
export function assertPipelineOperators(pipeline: Document[], where: string): void {
  assertNoForbiddenOperators(pipeline, where);
  // "$match" is a key only as a stage name (no field may start with "$"), so every one is found
  // without following the shapes of the stages that hold sub-pipelines.
  const stack: unknown[] = [pipeline];
  while (stack.length > 0) {
    const current = stack.pop();
    if (Array.isArray(current)) {
      for (const item of current) if (typeof item === 'object') stack.push(item);
    } else if (isPlainObject(current)) {
      for (const key of Object.keys(current)) {
        const child = current[key];
        if (key === '$match' && isPlainObject(child)) assertTextAtTop(child, where);
        else if (typeof child === 'object') stack.push(child);
      }
    }
  }
}

/** The logical operators whose clauses are filters of whole records, like the filter holding them. */
const CLAUSE_LISTS = new Set(['$and', '$or', '$nor']);

/**
 * `$text` searches whole records (through the collection's text index): MongoDB takes it at the
 * top of a filter or in the clauses of `$and`/`$or`/`$nor` there, nowhere else. Placed under a
 * field (`{"a": {"$text": ...}}`) it is refused here with a message that says so; the local
 * engine would answer an internal error, which reads as an outage and is retried in vain.
 */
function assertTextAtTop(filter: Document, where: string): void {
  // Iterative: filters are user input. `field` is the field path the value lies under, if any.
  const stack: { value: unknown; top: boolean; field: string | undefined }[] = [{ value: filter, top: true, field: undefined }];
  while (stack.length > 0) {
    const { value, top, field } = stack.pop()!;
    if (Array.isArray(value)) {
      for (const item of value) if (typeof item === 'object') stack.push({ value: item, top: false, field });
      continue;
    }
    if (!isPlainObject(value)) continue;
    for (const key of Object.keys(value)) {
      if (key === '$text' && !top) {
        const place = field === undefined ? 'not inside another operator' : `not under the field ${JSON.stringify(field)}`;
        throw badRequest(
          'invalid_query',
          `"$text" searches whole records: put it at the top of the filter in ${where} (or in its "$and", "$or"), ${place}.`,
          field === undefined ? undefined : { field },
        );
      }
      const child = value[key];
      if (typeof child !== 'object' || child === null) continue;
      if (top && CLAUSE_LISTS.has(key) && Array.isArray(child)) {
        for (const clause of child) if (typeof clause === 'object') stack.push({ value: clause, top: true, field: undefined });
      } else {
        const under = key.charCodeAt(0) === 36 ? field : field === undefined ? key : `${field}.${key}`;
        stack.push({ value: child, top: false, field: under });
      }
    }
  }
}

/**
 * Every collection (in the same database) that `pipeline` reads through `$lookup`,
 * `$graphLookup` or `$unionWith`, including those inside `$lookup`/`$unionWith` sub-pipelines and
 * `$facet` branches, deduplicated in order of first appearance. The pipeline's own collection is
 * not known here and is listed only if a stage names it explicitly.
 *
 * Shapes this function does not understand are refused rather than skipped, so a permission
 * check built on it can never miss a collection the server would read; so are stages outside
 * the allowed list (pipeline-stages.ts), at every depth.
 */
export function lookupTargets(pipeline: Document[]): string[] {
  const targets = new Set<string>();
  collectTargets(pipeline, 'pipeline', targets, 0);
  return [...targets];
}

// $lookup inside $facet inside $lookup ... is bounded by MongoDB's own nesting limit; this guard
// keeps a hostile input from overflowing the stack if it arrives here unchecked.
const MAX_PIPELINE_NESTING = 50;

function collectTargets(pipeline: unknown, where: string, targets: Set<string>, depth: number): void {
  if (depth > MAX_PIPELINE_NESTING) {
    throw badRequest('invalid_pipeline', `Sub-pipelines are nested more than ${MAX_PIPELINE_NESTING} levels deep.`);
  }
  if (!Array.isArray(pipeline)) throw badRequest('invalid_pipeline', `The ${where} must be an array of stages.`);
  for (const stage of pipeline) {
    if (!isPlainObject(stage)) continue; // not a stage at all: the server refuses it without reading anything
    for (const [name, spec] of Object.entries(stage)) {
      assertAllowedStage(name, where, depth > 0);
      switch (name) {
        case '$lookup': {
          const lookup = requireObject(spec, name);
          if (lookup.from !== undefined) targets.add(collectionName(lookup.from, name));
          if (lookup.pipeline !== undefined) collectTargets(lookup.pipeline, '$lookup pipeline', targets, depth + 1);
          break;
        }
        case '$graphLookup': {
          const graph = requireObject(spec, name);
          targets.add(collectionName(graph.from, name));
          break;
        }
        case '$unionWith': {
          if (typeof spec === 'string') {
            targets.add(collectionName(spec, name));
            break;
          }
          const union = requireObject(spec, name);
          if (union.db !== undefined) throw crossDatabase(name);
          // `{pipeline}` without `coll` is allowed by MongoDB when the pipeline starts with $documents.
          if (union.coll !== undefined) targets.add(collectionName(union.coll, name));
          if (union.pipeline !== undefined) collectTargets(union.pipeline, '$unionWith pipeline', targets, depth + 1);
          break;
        }
        case '$facet': {
          const facet = requireObject(spec, name);
          for (const [branch, sub] of Object.entries(facet)) {
            collectTargets(sub, `$facet branch "${branch}"`, targets, depth + 1);
          }
          break;
        }
        default:
          break;
      }
    }
  }
}

function requireObject(spec: unknown, stage: string): Record<string, unknown> {
  if (!isPlainObject(spec)) throw badRequest('invalid_pipeline', `The "${stage}" stage must be an object.`, { stage });
  return spec;
}

const crossDatabase = (stage: string) =>
  badRequest('cross_database_lookup', `"${stage}" may only read collections of the same database.`, { stage });

function collectionName(from: unknown, stage: string): string {
  if (typeof from === 'string') return validateCollectionName(from);
  // `{db, coll}` is the cross-database form (Atlas only); it would bypass per-database permissions.
  if (isPlainObject(from)) throw crossDatabase(stage);
  throw badRequest('invalid_pipeline', `The collection named by "${stage}" must be a string.`, { stage });
}
