import type { Document } from 'mongodb';
import { ObjectId } from 'mongodb';
import { describe, expect, it } from 'vitest';
import {
  FORBIDDEN_OPERATORS,
  assertFilterOperators,
  assertNoForbiddenOperators,
  assertPipelineOperators,
  lookupTargets,
} from '../../../src/documents/operators.js';
import { apiError } from './api-error.js';

describe('FORBIDDEN_OPERATORS', () => {
  it('is exactly the contract list', () => {
    expect([...FORBIDDEN_OPERATORS].sort()).toEqual(['$accumulator', '$function', '$merge', '$out', '$where']);
  });
});

describe('assertNoForbiddenOperators', () => {
  const operators = ['$out', '$merge', '$where', '$function', '$accumulator'];

  // Each placement wraps the operator somewhere a user could hide it.
  const placements: [string, (op: string) => unknown][] = [
    ['top level of a filter', (op) => ({ [op]: 'x' })],
    ['a pipeline stage', (op) => [{ $match: {} }, { [op]: 'other' }]],
    ['inside $and', (op) => ({ $and: [{ a: 1 }, { [op]: 'this.a > 1' }] })],
    ['inside $or', (op) => ({ $or: [{ a: 1 }, { b: { $elemMatch: { [op]: 1 } } }] })],
    ['deep inside $and/$or/$nor', (op) => ({ $and: [{ $or: [{ $nor: [{ c: { [op]: {} } }] }] }] })],
    ['inside $expr', (op) => ({ $expr: { $gt: [{ [op]: { body: 'f', args: [], lang: 'js' } }, 1] } })],
    ['inside a $facet branch', (op) => [{ $facet: { one: [{ $match: {} }], two: [{ [op]: 'c' }] } }]],
    ['inside $lookup.pipeline', (op) => [{ $lookup: { from: 'b', as: 'j', pipeline: [{ $match: { [op]: 1 } }] } }]],
    ['inside $unionWith.pipeline', (op) => [{ $unionWith: { coll: 'b', pipeline: [{ [op]: 'c' }] } }]],
    ['inside a $group accumulator', (op) => [{ $group: { _id: null, v: { [op]: { init: 'f' } } } }]],
    ['50 levels deep', (op) => Array.from({ length: 50 }).reduce<unknown>((inner) => ({ x: [inner] }), { [op]: 1 })],
  ];

  for (const op of operators) {
    it.each(placements)(`refuses ${op} at %s`, (_where, build) => {
      const err = apiError(() => assertNoForbiddenOperators(build(op), 'aggregate'));
      expect(err.status).toBe(400);
      expect(err.code).toBe('forbidden_operator');
      expect(err.message).toBe(`Operator "${op}" is not allowed in aggregate.`);
      expect(err.detail).toEqual({ operator: op });
    });
  }

  it('names the place it was given', () => {
    expect(apiError(() => assertNoForbiddenOperators({ $where: '1' }, 'query')).message).toBe('Operator "$where" is not allowed in query.');
  });

  it('allows ordinary operators, field references and values that merely look like operators', () => {
    const allowed: unknown[] = [
      {},
      { a: 1, b: { $gt: 2 }, $or: [{ c: { $in: [1, 2] } }] },
      [{ $match: { x: 1 } }, { $group: { _id: '$out', total: { $sum: '$merge' } } }, { $sort: { _id: 1 } }],
      { note: '$where', list: ['$function', '$accumulator'] },
      { outcome: 1, merged: true, where: 'here', $expr: { $eq: ['$a', '$b'] } },
      { _id: new ObjectId(), when: new Date() },
      [{ $lookup: { from: 'b', localField: 'x', foreignField: 'y', as: 'z' } }],
      null,
      'string',
      42,
    ];
    for (const value of allowed) expect(() => assertNoForbiddenOperators(value, 'query')).not.toThrow();
  });

  it('is case-sensitive like MongoDB ($WHERE is not an operator)', () => {
    expect(() => assertNoForbiddenOperators({ $WHERE: 1, $Out: 2 }, 'query')).not.toThrow();
  });

  it('copes with very deep and very wide inputs', () => {
    let deep: unknown = { $where: 'x' };
    for (let i = 0; i < 20_000; i += 1) deep = [deep];
    expect(apiError(() => assertNoForbiddenOperators(deep, 'query')).code).toBe('forbidden_operator');
    const wide = Array.from({ length: 300_000 }, (_, i) => ({ i }));
    expect(() => assertNoForbiddenOperators(wide, 'query')).not.toThrow();
  });
});

describe('lookupTargets', () => {
  const cases: [string, Document[], string[]][] = [
    ['no lookups', [{ $match: { a: 1 } }, { $group: { _id: '$a' } }], []],
    ['empty pipeline', [], []],
    ['$lookup.from', [{ $lookup: { from: 'orders', localField: 'a', foreignField: 'b', as: 'o' } }], ['orders']],
    [
      '$graphLookup.from',
      [{ $graphLookup: { from: 'people', startWith: '$boss', connectFromField: 'boss', connectToField: 'name', as: 'chain' } }],
      ['people'],
    ],
    ['$unionWith as a string', [{ $unionWith: 'archive' }], ['archive']],
    ['$unionWith as {coll}', [{ $unionWith: { coll: 'archive' } }], ['archive']],
    [
      '$unionWith with a pipeline that looks up',
      [{ $unionWith: { coll: 'a2020', pipeline: [{ $lookup: { from: 'sites', as: 's', pipeline: [] } }] } }],
      ['a2020', 'sites'],
    ],
    [
      '$lookup.pipeline with nested lookups',
      [
        {
          $lookup: {
            from: 'level1',
            as: 'l1',
            pipeline: [{ $lookup: { from: 'level2', as: 'l2', pipeline: [{ $unionWith: 'level3' }] } }],
          },
        },
      ],
      ['level1', 'level2', 'level3'],
    ],
    ['$lookup with only a pipeline ($documents)', [{ $lookup: { as: 'd', pipeline: [{ $documents: [{ x: 1 }] }] } }], []],
    [
      '$facet branches',
      [
        {
          $facet: {
            left: [{ $lookup: { from: 'facetA', localField: 'a', foreignField: 'a', as: 'x' } }],
            right: [{ $match: {} }, { $unionWith: { coll: 'facetB' } }],
          },
        },
      ],
      ['facetA', 'facetB'],
    ],
    [
      '$lookup inside $facet inside $lookup.pipeline',
      [
        {
          $lookup: {
            from: 'outer',
            as: 'o',
            pipeline: [
              { $facet: { f: [{ $graphLookup: { from: 'inner', startWith: 1, connectFromField: 'a', connectToField: 'b', as: 'g' } }] } },
            ],
          },
        },
      ],
      ['outer', 'inner'],
    ],
    [
      'duplicates, kept once in order of first appearance',
      [{ $unionWith: 'b' }, { $lookup: { from: 'a', as: 'x', localField: 'k', foreignField: 'k' } }, { $unionWith: { coll: 'b' } }],
      ['b', 'a'],
    ],
  ];

  it.each(cases)('%s', (_what, pipeline, expected) => {
    expect(lookupTargets(pipeline)).toEqual(expected);
  });

  it.each([
    ['$lookup', [{ $lookup: { from: { db: 'other', coll: 'secrets' }, as: 'x', localField: 'a', foreignField: 'b' } }]],
    [
      '$graphLookup',
      [{ $graphLookup: { from: { db: 'other', coll: 'c' }, startWith: 1, connectFromField: 'a', connectToField: 'b', as: 'g' } }],
    ],
    ['$unionWith', [{ $unionWith: { db: 'other', coll: 'secrets' } }]],
    ['$lookup nested in $facet', [{ $facet: { f: [{ $lookup: { from: { db: 'other', coll: 'c' }, as: 'x', pipeline: [] } }] } }]],
    [
      '$unionWith nested in $lookup.pipeline',
      [{ $lookup: { from: 'ok', as: 'x', pipeline: [{ $unionWith: { db: 'admin', coll: 'system.users' } }] } }],
    ],
  ])('refuses the cross-database form of %s', (stage, pipeline) => {
    const err = apiError(() => lookupTargets(pipeline as Document[]));
    expect(err.status).toBe(400);
    expect(err.code).toBe('cross_database_lookup');
    expect(err.message).toContain(stage.split(' ')[0]!);
  });

  it('refuses shapes it cannot vouch for instead of skipping them', () => {
    expect(apiError(() => lookupTargets([{ $lookup: 'orders' }])).code).toBe('invalid_pipeline');
    expect(apiError(() => lookupTargets([{ $lookup: { from: 7, as: 'x' } }])).code).toBe('invalid_pipeline');
    expect(apiError(() => lookupTargets([{ $graphLookup: { startWith: 1, as: 'x' } }])).code).toBe('invalid_pipeline');
    expect(apiError(() => lookupTargets([{ $unionWith: 12 }])).code).toBe('invalid_pipeline');
    expect(apiError(() => lookupTargets([{ $lookup: { from: 'a', as: 'x', pipeline: { $match: {} } } }])).code).toBe('invalid_pipeline');
    expect(apiError(() => lookupTargets([{ $facet: { f: { $unionWith: 'x' } } }])).code).toBe('invalid_pipeline');
  });

  it('refuses lookups into invalid or system collections', () => {
    expect(apiError(() => lookupTargets([{ $unionWith: 'system.views' }])).code).toBe('invalid_name');
    expect(apiError(() => lookupTargets([{ $lookup: { from: '$cmd', as: 'x' } }])).code).toBe('invalid_name');
    expect(apiError(() => lookupTargets([{ $lookup: { from: '', as: 'x' } }])).code).toBe('invalid_name');
  });
});

describe('$text in filters', () => {
  const search = { $search: 'fox' };

  it.each([
    ['at the top', { $text: search, a: 1 }],
    ['in a top-level $and', { $and: [{ a: 1 }, { $text: search }] }],
    ['in a top-level $or', { $or: [{ $text: search }, { a: 1 }] }],
    ['in $and inside $or', { $or: [{ $and: [{ $text: search }] }] }],
  ])('accepts $text %s', (_where, filter) => {
    expect(() => assertFilterOperators(filter, 'query')).not.toThrow();
    expect(() => assertPipelineOperators([{ $match: filter }], 'aggregate')).not.toThrow();
  });

  it.each([
    ['under a field', { a: { $text: search } }, 'a'],
    ['under a nested field', { a: { b: { $text: search } } }, 'a.b'],
    ['under a field in $and', { $and: [{ a: { $text: search } }] }, 'a'],
    ['under $not', { a: { $not: { $text: search } } }, 'a'],
    ['in $elemMatch', { tags: { $elemMatch: { x: { $text: search } } } }, 'tags.x'],
    ['inside $expr', { $expr: { $text: search } }, undefined],
    ['in an array value', { a: { $in: [{ $text: search }] } }, 'a'],
  ])('refuses $text %s with a 400 that says where it goes', (_where, filter, field) => {
    for (const err of [
      apiError(() => assertFilterOperators(filter, 'query')),
      apiError(() => assertPipelineOperators([{ $match: filter }], 'aggregate')),
    ]) {
      expect(err.status).toBe(400);
      expect(err.code).toBe('invalid_query');
      expect(err.message).toContain('top of the filter');
      expect(err.detail).toEqual(field === undefined ? undefined : { field });
    }
  });

  it('checks every $match of a pipeline, in sub-pipelines too', () => {
    const fieldText = { $match: { a: { $text: search } } };
    for (const pipeline of [
      [{ $match: {} }, fieldText],
      [{ $facet: { one: [fieldText] } }],
      [{ $lookup: { from: 'b', as: 'j', pipeline: [fieldText] } }],
      [{ $unionWith: { coll: 'b', pipeline: [{ $match: { x: 1 } }, fieldText] } }],
    ]) {
      expect(apiError(() => assertPipelineOperators(pipeline, 'aggregate')).code).toBe('invalid_query');
    }
    expect(() => assertPipelineOperators([{ $match: { $text: search } }, { $project: { a: 1 } }], 'aggregate')).not.toThrow();
  });

  it('still refuses forbidden operators', () => {
    expect(apiError(() => assertFilterOperators({ $where: '1' }, 'partialFilterExpression')).code).toBe('forbidden_operator');
    expect(apiError(() => assertPipelineOperators([{ $out: 'x' }], 'aggregate')).code).toBe('forbidden_operator');
  });
});
