import { describe, expect, it } from 'vitest';
import { BSONRegExp } from 'mongodb';
import { HeavyQueryLimiter } from '../../../src/documents/heavy-queries.js';
import { filterScansEveryRecord, isHeavyRead } from '../../../src/documents/heavy-reads.js';
import { apiError as refusal } from './api-error.js';

describe('HeavyQueryLimiter', () => {
  it('allows perCaller slots per caller, then 429 with Retry-After until the oldest reaches the time limit', () => {
    let now = 10_000;
    const limiter = new HeavyQueryLimiter({ perCaller: 2, total: 10, timeLimitMs: 30_000 }, () => now);
    limiter.acquire('user:a');
    now += 5_000;
    limiter.acquire('user:a');
    now += 1_000;
    const err = refusal(() => limiter.acquire('user:a'));
    expect(err).toMatchObject({ status: 429, code: 'too_many_heavy_queries' });
    expect(err.headers['Retry-After']).toBe('24');
    expect(err.toBody().error.detail).toEqual({ limit: 2 });
    // Another caller is not affected.
    expect(() => limiter.acquire('user:b')).not.toThrow();
  });

  it('frees a slot once, however often release is called', () => {
    const limiter = new HeavyQueryLimiter({ perCaller: 1, total: 10, timeLimitMs: 1_000 });
    const release = limiter.acquire('ip:1.2.3.4');
    expect(limiter.inUse('ip:1.2.3.4')).toBe(1);
    release();
    release();
    expect(limiter.inUse('ip:1.2.3.4')).toBe(0);
    expect(limiter.inUse()).toBe(0);
    const again = limiter.acquire('ip:1.2.3.4');
    const other = limiter.acquire('ip:5.6.7.8');
    again();
    expect(limiter.inUse()).toBe(1);
    other();
  });

  it('caps all callers together with 503 heavy_queries_busy', () => {
    const limiter = new HeavyQueryLimiter({ perCaller: 2, total: 3, timeLimitMs: 2_000 });
    limiter.acquire('user:a');
    limiter.acquire('user:a');
    const release = limiter.acquire('user:b');
    const err = refusal(() => limiter.acquire('user:c'));
    expect(err).toMatchObject({ status: 503, code: 'heavy_queries_busy' });
    expect(Number(err.headers['Retry-After'])).toBeGreaterThanOrEqual(1);
    release();
    expect(() => limiter.acquire('user:c')).not.toThrow();
  });

  it('never advises less than one second', () => {
    let now = 0;
    const limiter = new HeavyQueryLimiter({ perCaller: 1, total: 5, timeLimitMs: 500 }, () => now);
    limiter.acquire('user:a');
    now = 10_000; // a slot held past the time limit, e.g. while its response streams
    expect(refusal(() => limiter.acquire('user:a')).headers['Retry-After']).toBe('1');
  });
});

describe('isHeavyRead', () => {
  it('counts every aggregation and distinct as heavy', () => {
    expect(isHeavyRead({ pipeline: [{ $match: { a: 1 } }], distinctFields: undefined, filter: {} })).toBe(true);
    expect(isHeavyRead({ pipeline: undefined, distinctFields: ['a'], filter: {} })).toBe(true);
    expect(isHeavyRead({ pipeline: undefined, distinctFields: undefined, filter: {} })).toBe(false);
  });

  it('counts listings whose filter evaluates an expression or a pattern per record', () => {
    expect(filterScansEveryRecord({ $expr: { $gt: ['$a', '$b'] } })).toBe(true);
    expect(filterScansEveryRecord({ $and: [{ a: 1 }, { b: { $regex: '^x' } }] })).toBe(true);
    expect(filterScansEveryRecord({ name: new BSONRegExp('^x', 'i') })).toBe(true);
    expect(filterScansEveryRecord({ name: /x/ })).toBe(true);
    expect(filterScansEveryRecord({ $text: { $search: 'x' } })).toBe(true);
    expect(filterScansEveryRecord({ $jsonSchema: { required: ['a'] } })).toBe(true);
  });

  it('leaves plain comparisons light, also when a value looks like an operator', () => {
    expect(filterScansEveryRecord({ site: 'alpha', n: { $gte: 3, $lt: 9 }, tags: { $in: ['a', 'b'] } })).toBe(false);
    expect(filterScansEveryRecord({ note: '$expr', other: ['$regex'] })).toBe(false);
  });
});
