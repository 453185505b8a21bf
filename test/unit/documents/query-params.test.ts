import { ObjectId } from 'mongodb';
import { describe, expect, it } from 'vitest';
import {
  buildAggregationPipeline,
  buildDistinctPipeline,
  distinctRowToObject,
  distinctRowToResult,
  parseAggregate,
  parseDistinct,
  parseQuery,
} from '../../../src/documents/query-params.js';
import { apiError } from './api-error.js';

const LIMIT = 64 * 1024;
const HEX = '64b7f0c2a1b2c3d4e5f60718';
const q = (value: unknown): string => JSON.stringify(value);

describe('parseQuery', () => {
  it('means "everything" when absent or blank', () => {
    expect(parseQuery(undefined, LIMIT)).toEqual({ filter: {} });
    expect(parseQuery('', LIMIT)).toEqual({ filter: {} });
    expect(parseQuery('   ', LIMIT)).toEqual({ filter: {} });
  });

  it('reads filter, projection and sort', () => {
    const query = parseQuery(
      q({ filter: { tag: 'soil', depth: { $gt: 3 } }, projection: { tag: 1, _id: 0 }, sort: { depth: -1, tag: 1 } }),
      LIMIT,
    );
    expect(query).toEqual({ filter: { tag: 'soil', depth: { $gt: 3 } }, projection: { tag: 1, _id: 0 }, sort: { depth: -1, tag: 1 } });
    expect(Object.keys(query.sort!)).toEqual(['depth', 'tag']);
  });

  it('defaults a missing filter to {} and leaves out missing or empty projection and sort', () => {
    expect(parseQuery('{}', LIMIT)).toEqual({ filter: {} });
    const query = parseQuery(q({ projection: {}, sort: {} }), LIMIT);
    expect(query).toEqual({ filter: {} });
    expect('projection' in query).toBe(false);
    expect('sort' in query).toBe(false);
  });

  it('turns boolean projections into 0/1', () => {
    expect(parseQuery(q({ projection: { a: true, b: true, _id: false } }), LIMIT).projection).toEqual({ a: 1, b: 1, _id: 0 });
    expect(parseQuery(q({ projection: { a: false } }), LIMIT).projection).toEqual({ a: 0 });
  });

  it('accepts Extended JSON in the filter', () => {
    const query = parseQuery('{"filter": {"when": {"$lt": {"$date": "2020-01-01T00:00:00Z"}}}}', LIMIT);
    expect(query.filter).toEqual({ when: { $lt: new Date('2020-01-01T00:00:00Z') } });
  });

  it('makes a 24-hex _id match both the ObjectId and the string', () => {
    expect(parseQuery(q({ filter: { _id: HEX } }), LIMIT).filter).toEqual({
      _id: { $in: [ObjectId.createFromHexString(HEX), HEX] },
    });
  });

  it.each([
    ['an array', '[1, 2]'],
    ['a string', '"filter"'],
    ['a number', '3'],
    ['null', 'null'],
  ])('refuses a query that is %s', (what, raw) => {
    const err = apiError(() => parseQuery(raw, LIMIT));
    expect(err.status).toBe(400);
    expect(err.code).toBe('invalid_query');
    expect(err.message).toContain(what);
  });

  it('names every unknown key', () => {
    const one = apiError(() => parseQuery(q({ filter: {}, limit: 5 }), LIMIT));
    expect(one.code).toBe('invalid_query');
    expect(one.message).toContain('"limit"');
    expect(one.detail).toEqual({ keys: ['limit'] });
    const two = apiError(() => parseQuery(q({ fliter: {}, skip: 1 }), LIMIT));
    expect(two.message).toContain('"fliter", "skip"');
    expect(two.detail).toEqual({ keys: ['fliter', 'skip'] });
  });

  it.each([
    ['array', []],
    ['string', 'a=1'],
    ['null', null],
    ['number', 1],
  ])('refuses a filter that is a %s', (_what, filter) => {
    const err = apiError(() => parseQuery(q({ filter }), LIMIT));
    expect(err.code).toBe('invalid_query');
    expect(err.message).toContain('"filter"');
  });

  it.each(['$where', '$function', '$accumulator', '$out', '$merge'])('refuses %s anywhere in the filter', (op) => {
    const top = apiError(() => parseQuery(q({ filter: { [op]: 'x' } }), LIMIT));
    expect(top.code).toBe('forbidden_operator');
    expect(top.message).toBe(`Operator "${op}" is not allowed in query.`);
    const deep = apiError(() => parseQuery(q({ filter: { $and: [{ a: 1 }, { $or: [{ b: { $not: { [op]: 1 } } }] }] } }), LIMIT));
    expect(deep.code).toBe('forbidden_operator');
  });

  it.each([
    ['2', { a: 2 }],
    ['-1', { a: -1 }],
    ['a string', { a: '1' }],
    ['null', { a: null }],
    ['an expression', { a: { $slice: 2 } }],
    ['an array', { a: [1] }],
  ])('refuses a projection value of %s, naming the field', (_what, projection) => {
    const err = apiError(() => parseQuery(q({ projection }), LIMIT));
    expect(err.code).toBe('invalid_projection');
    expect(err.message).toContain('"a"');
  });

  it('refuses a projection that is not an object', () => {
    expect(apiError(() => parseQuery(q({ projection: ['a'] }), LIMIT)).code).toBe('invalid_projection');
    expect(apiError(() => parseQuery(q({ projection: 'a' }), LIMIT)).code).toBe('invalid_projection');
  });

  it('refuses mixing inclusion and exclusion, except for _id', () => {
    const err = apiError(() => parseQuery(q({ projection: { a: 1, b: 0 } }), LIMIT));
    expect(err.code).toBe('invalid_projection');
    expect(err.message).toContain('"a"');
    expect(err.message).toContain('"b"');
    expect(parseQuery(q({ projection: { a: 1, _id: 0 } }), LIMIT).projection).toEqual({ a: 1, _id: 0 });
    expect(parseQuery(q({ projection: { a: 0, _id: 1 } }), LIMIT).projection).toEqual({ a: 0, _id: 1 });
  });

  it('refuses overlapping projection paths', () => {
    const err = apiError(() => parseQuery(q({ projection: { 'a.b.c': 1, a: 1 } }), LIMIT));
    expect(err.code).toBe('invalid_projection');
    expect(err.message).toContain('"a" and "a.b.c"');
    expect(parseQuery(q({ projection: { 'a.b': 1, 'a.c': 1, ab: 1 } }), LIMIT).projection).toEqual({ 'a.b': 1, 'a.c': 1, ab: 1 });
  });

  it('checks projection field names', () => {
    expect(apiError(() => parseQuery(q({ projection: { $a: 1 } }), LIMIT)).code).toBe('invalid_projection');
    expect(apiError(() => parseQuery(q({ projection: { '': 1 } }), LIMIT)).code).toBe('invalid_projection');
    expect(apiError(() => parseQuery(q({ projection: { 'a..b': 1 } }), LIMIT)).code).toBe('invalid_projection');
    expect(apiError(() => parseQuery(q({ projection: { $: 1 } }), LIMIT)).code).toBe('invalid_projection');
    // The positional projection is fine as the last segment.
    expect(parseQuery(q({ projection: { 'tags.$': 1 } }), LIMIT).projection).toEqual({ 'tags.$': 1 });
  });

  it.each([
    ['0', { a: 0 }],
    ['2', { a: 2 }],
    ['a string', { a: 'asc' }],
    ['"1"', { a: '1' }],
    ['true', { a: true }],
    ['1.5', { a: 1.5 }],
    ['$meta', { a: { $meta: 'textScore' } }],
  ])('refuses a sort direction of %s, naming the field', (_what, sort) => {
    const err = apiError(() => parseQuery(q({ sort }), LIMIT));
    expect(err.code).toBe('invalid_sort');
    expect(err.message).toContain('"a"');
  });

  it('refuses a sort that is not an object and bad sort fields', () => {
    expect(apiError(() => parseQuery(q({ sort: [['a', 1]] }), LIMIT)).code).toBe('invalid_sort');
    expect(apiError(() => parseQuery(q({ sort: 'a' }), LIMIT)).code).toBe('invalid_sort');
    expect(apiError(() => parseQuery(q({ sort: { $natural: 1 } }), LIMIT)).code).toBe('invalid_sort');
    expect(apiError(() => parseQuery(q({ sort: { 'a.': 1 } }), LIMIT)).code).toBe('invalid_sort');
  });

  it('refuses malformed JSON', () => {
    const err = apiError(() => parseQuery('{"filter": ', LIMIT));
    expect(err.code).toBe('malformed_json');
    expect(err.message).toContain('"query"');
  });

  it('answers 414 for a query over the byte limit, counting UTF-8 bytes', () => {
    const raw = q({ filter: { a: 'x'.repeat(100) } });
    expect(() => parseQuery(raw, raw.length)).not.toThrow();
    const err = apiError(() => parseQuery(raw, raw.length - 1));
    expect(err.status).toBe(414);
    expect(err.message).toContain('"query"');
    const multibyte = q({ filter: { a: 'é' } }); // 'é' is 1 character but 2 bytes
    expect(apiError(() => parseQuery(multibyte, multibyte.length)).status).toBe(414);
  });
});

describe('parseAggregate', () => {
  it('is undefined when absent or blank and accepts an empty pipeline', () => {
    expect(parseAggregate(undefined, LIMIT)).toBeUndefined();
    expect(parseAggregate('', LIMIT)).toBeUndefined();
    expect(parseAggregate('[]', LIMIT)).toEqual([]);
  });

  it('returns the stages', () => {
    const stages = [{ $match: { a: 1 } }, { $group: { _id: '$b', n: { $sum: 1 } } }, { $sort: { n: -1 } }];
    expect(parseAggregate(q(stages), LIMIT)).toEqual(stages);
  });

  it('revives Extended JSON in stages', () => {
    const stages = parseAggregate(`[{"$match": {"_id": {"$oid": "${HEX}"}}}]`, LIMIT)!;
    expect((stages[0]!.$match as { _id: unknown })._id).toBeInstanceOf(ObjectId);
  });

  it.each([
    ['an object', { $match: {} }],
    ['a string', '$match'],
    ['null', null],
  ])('refuses a pipeline that is %s', (what, value) => {
    const err = apiError(() => parseAggregate(q(value), LIMIT));
    expect(err.code).toBe('invalid_pipeline');
    expect(err.message).toContain(what);
  });

  it.each([
    ['two keys', [{ $match: {}, $limit: 1 }]],
    ['no key', [{}]],
    ['a key without $', [{ match: {} }]],
    ['a non-object', [{ $match: {} }, 'limit']],
    ['an array', [[{ $match: {} }]]],
  ])('refuses a stage with %s, giving its index', (_what, pipeline) => {
    const err = apiError(() => parseAggregate(q(pipeline), LIMIT));
    expect(err.code).toBe('invalid_pipeline');
    expect(err.message).toMatch(/stage at index \d/);
  });

  it('reports the index of the bad stage', () => {
    expect(apiError(() => parseAggregate(q([{ $match: {} }, { $limit: 1 }, { nope: 1 }]), LIMIT)).detail).toEqual({ index: 2 });
  });

  it.each([
    ['$out', [{ $match: {} }, { $out: 'copy' }]],
    ['$merge', [{ $merge: { into: 'copy' } }]],
    ['$where', [{ $match: { $where: 'this.a' } }]],
    ['$function', [{ $addFields: { x: { $function: { body: 'f', args: [], lang: 'js' } } } }]],
    ['$accumulator', [{ $group: { _id: null, x: { $accumulator: {} } } }]],
    ['$out', [{ $facet: { a: [{ $out: 'x' }] } }]],
    ['$merge', [{ $lookup: { from: 'b', as: 'x', pipeline: [{ $merge: 'c' }] } }]],
  ])('refuses %s', (op, pipeline) => {
    const err = apiError(() => parseAggregate(q(pipeline), LIMIT));
    expect(err.code).toBe('forbidden_operator');
    expect(err.message).toBe(`Operator "${op}" is not allowed in aggregate.`);
  });

  it('refuses cross-database lookups while parsing', () => {
    const err = apiError(() => parseAggregate(q([{ $lookup: { from: { db: 'x', coll: 'y' }, as: 'z', pipeline: [] } }]), LIMIT));
    expect(err.code).toBe('cross_database_lookup');
  });

  it('answers 414 over the byte limit', () => {
    const raw = q([{ $match: { a: 'y'.repeat(1000) } }]);
    expect(apiError(() => parseAggregate(raw, 1000)).status).toBe(414);
    expect(parseAggregate(raw, raw.length)).toHaveLength(1);
  });
});

describe('buildAggregationPipeline', () => {
  const pipeline = [{ $group: { _id: '$a' } }];

  it('prepends the filter as $match', () => {
    expect(buildAggregationPipeline({ filter: { a: 1 } }, pipeline)).toEqual([{ $match: { a: 1 } }, { $group: { _id: '$a' } }]);
  });

  it('adds nothing for an empty or absent filter, and ignores projection and sort', () => {
    expect(buildAggregationPipeline({ filter: {} }, pipeline)).toEqual(pipeline);
    expect(buildAggregationPipeline(undefined, pipeline)).toEqual(pipeline);
    expect(buildAggregationPipeline({ filter: {}, projection: { a: 1 }, sort: { a: 1 } }, pipeline)).toEqual(pipeline);
    expect(buildAggregationPipeline({ filter: { b: 2 } }, [])).toEqual([{ $match: { b: 2 } }]);
  });

  it('does not modify the pipeline it was given', () => {
    const given = [{ $limit: 1 }];
    buildAggregationPipeline({ filter: { a: 1 } }, given);
    expect(given).toEqual([{ $limit: 1 }]);
  });
});

describe('parseDistinct', () => {
  it('is undefined when absent or blank', () => {
    expect(parseDistinct(undefined)).toBeUndefined();
    expect(parseDistinct('')).toBeUndefined();
    expect(parseDistinct('  ')).toBeUndefined();
  });

  it('splits, trims and keeps order; dotted paths are allowed', () => {
    expect(parseDistinct('site')).toEqual(['site']);
    expect(parseDistinct(' site , loc.lat,loc.lon ')).toEqual(['site', 'loc.lat', 'loc.lon']);
    expect(parseDistinct('with space')).toEqual(['with space']);
  });

  it.each([
    ['an empty field between commas', 'a,,b'],
    ['a trailing comma', 'a,b,'],
    ['a leading comma', ',a'],
    ['a $ prefix', '$a'],
    ['a $ segment', 'a.$b'],
    ['an empty path segment', 'a..b'],
    ['a trailing dot', 'a.'],
    ['a NUL', 'a\0'],
  ])('refuses %s', (_what, raw) => {
    const err = apiError(() => parseDistinct(raw));
    expect(err.status).toBe(400);
    expect(err.code).toBe('invalid_distinct');
  });

  it('names a duplicated field, also after trimming', () => {
    const err = apiError(() => parseDistinct('a, b, a'));
    expect(err.code).toBe('invalid_distinct');
    expect(err.message).toContain('"a"');
    expect(apiError(() => parseDistinct('x,x ')).code).toBe('invalid_distinct');
  });

  it('allows 32 fields and refuses 33', () => {
    const fields = (n: number) => Array.from({ length: n }, (_, i) => `field${i}`).join(',');
    expect(parseDistinct(fields(32))).toHaveLength(32);
    const err = apiError(() => parseDistinct(fields(33)));
    expect(err.code).toBe('invalid_distinct');
    expect(err.message).toContain('33');
  });
});

describe('buildDistinctPipeline and the row helpers', () => {
  it('groups several fields under generated keys and sorts by the group', () => {
    expect(buildDistinctPipeline({ site: 'A' }, ['a', 'b.c'])).toEqual([
      { $match: { site: 'A' } },
      { $group: { _id: { f0: '$a', f1: '$b.c' } } },
      { $sort: { _id: 1 } },
    ]);
  });

  it('has no $match for an empty filter with several fields', () => {
    expect(buildDistinctPipeline({}, ['a', 'b'])).toEqual([{ $group: { _id: { f0: '$a', f1: '$b' } } }, { $sort: { _id: 1 } }]);
  });

  it('leaves out documents lacking the field when there is one field', () => {
    expect(buildDistinctPipeline({}, ['x.y'])).toEqual([
      { $match: { 'x.y': { $exists: true } } },
      { $group: { _id: { f0: '$x.y' } } },
      { $sort: { _id: 1 } },
    ]);
    expect(buildDistinctPipeline({ k: 1 }, ['a'])[0]).toEqual({ $match: { $and: [{ k: 1 }, { a: { $exists: true } }] } });
  });

  it('refuses an empty field list (a programming error)', () => {
    expect(() => buildDistinctPipeline({}, [])).toThrow();
  });

  it('maps rows back to objects keyed by the requested fields', () => {
    expect(distinctRowToObject({ _id: { f0: 1, f1: 'x' } }, ['a', 'b.c'])).toEqual({ a: 1, 'b.c': 'x' });
    expect(distinctRowToObject({ _id: { f0: null } }, ['a', 'b'])).toEqual({ a: null });
    expect(distinctRowToObject({ _id: {} }, ['a', 'b'])).toEqual({});
    expect(distinctRowToObject({ _id: null }, ['a'])).toEqual({});
  });

  it('gives bare values for one field and objects for several', () => {
    expect(distinctRowToResult({ _id: { f0: 'soil' } }, ['kind'])).toBe('soil');
    expect(distinctRowToResult({ _id: { f0: [1, 2] } }, ['kind'])).toEqual([1, 2]);
    expect(distinctRowToResult({ _id: { f0: null } }, ['kind'])).toBeNull();
    expect(distinctRowToResult({ _id: { f0: 1, f1: 2 } }, ['a', 'b'])).toEqual({ a: 1, b: 2 });
  });
});
