import { ObjectId } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { normaliseIdFilter, recordIdCandidates, validateRecordId } from '../../../src/documents/query-params.js';
import { apiError } from './api-error.js';

const HEX = '5f0c1d2e3f405162738495a6';
const HEX2 = 'aaaaaaaaaaaaaaaaaaaaaaaa';
const oid = (hex: string) => ObjectId.createFromHexString(hex);

describe('normaliseIdFilter', () => {
  it('turns a 24-hex _id into "the ObjectId or the string"', () => {
    expect(normaliseIdFilter({ _id: HEX })).toEqual({ _id: { $in: [oid(HEX), HEX] } });
  });

  it('accepts upper-case hex (the string stays as written)', () => {
    const upper = HEX.toUpperCase();
    expect(normaliseIdFilter({ _id: upper })).toEqual({ _id: { $in: [oid(HEX), upper] } });
  });

  it.each([
    ['a short hex string', 'abc123'],
    ['25 hex characters', `${HEX}0`],
    ['23 hex characters', HEX.slice(1)],
    ['24 non-hex characters', 'zzzzzzzzzzzzzzzzzzzzzzzz'],
    ['a 12-character string (ObjectId.isValid would accept it)', 'abcdefghijkl'],
    ['a number', 42],
    ['null', null],
  ])('leaves %s alone', (_what, id) => {
    expect(normaliseIdFilter({ _id: id })).toEqual({ _id: id });
  });

  it('leaves an ObjectId alone', () => {
    const id = oid(HEX);
    expect(normaliseIdFilter({ _id: id })).toEqual({ _id: id });
  });

  it('expands hex strings in $in and $nin, keeping the other values', () => {
    expect(normaliseIdFilter({ _id: { $in: [HEX, 'other', 7] } })).toEqual({ _id: { $in: [oid(HEX), HEX, 'other', 7] } });
    expect(normaliseIdFilter({ _id: { $nin: [HEX, HEX2] } })).toEqual({ _id: { $nin: [oid(HEX), HEX, oid(HEX2), HEX2] } });
  });

  it('turns $eq into $in and $ne into $nin', () => {
    expect(normaliseIdFilter({ _id: { $eq: HEX } })).toEqual({ _id: { $in: [oid(HEX), HEX] } });
    expect(normaliseIdFilter({ _id: { $ne: HEX } })).toEqual({ _id: { $nin: [oid(HEX), HEX] } });
    expect(normaliseIdFilter({ _id: { $eq: 'short' } })).toEqual({ _id: { $eq: 'short' } });
  });

  it('keeps other operators beside the rewritten ones', () => {
    expect(normaliseIdFilter({ _id: { $ne: HEX, $exists: true } })).toEqual({ _id: { $nin: [oid(HEX), HEX], $exists: true } });
  });

  it('rewrites under $not', () => {
    expect(normaliseIdFilter({ _id: { $not: { $eq: HEX } } })).toEqual({ _id: { $not: { $in: [oid(HEX), HEX] } } });
  });

  it('splits conditions that would collide into $and instead of losing one', () => {
    expect(normaliseIdFilter({ a: 1, _id: { $eq: HEX, $in: [HEX, HEX2] } })).toEqual({
      a: 1,
      $and: [{ _id: { $in: [oid(HEX), HEX] } }, { _id: { $in: [oid(HEX), HEX, oid(HEX2), HEX2] } }],
    });
    expect(normaliseIdFilter({ $and: [{ b: 2 }], _id: { $ne: HEX, $nin: ['x'] } })).toEqual({
      $and: [{ b: 2 }, { _id: { $nin: [oid(HEX), HEX] } }, { _id: { $nin: ['x'] } }],
    });
  });

  it('recurses into $and, $or and $nor', () => {
    expect(normaliseIdFilter({ $or: [{ _id: HEX }, { $and: [{ _id: HEX2 }] }], $nor: [{ _id: { $in: [HEX] } }] })).toEqual({
      $or: [{ _id: { $in: [oid(HEX), HEX] } }, { $and: [{ _id: { $in: [oid(HEX2), HEX2] } }] }],
      $nor: [{ _id: { $in: [oid(HEX), HEX] } }],
    });
  });

  it('leaves other fields, even ones holding hex strings, untouched', () => {
    const filter = { ref: HEX, 'sub._id': HEX, nested: { _id: HEX } };
    expect(normaliseIdFilter(filter)).toEqual(filter);
  });

  it('does not add an ObjectId that is already listed and is idempotent', () => {
    expect(normaliseIdFilter({ _id: { $in: [oid(HEX), HEX] } })).toEqual({ _id: { $in: [oid(HEX), HEX] } });
    const once = normaliseIdFilter({ _id: HEX, $or: [{ _id: { $ne: HEX2 } }] });
    expect(normaliseIdFilter(once)).toEqual(once);
  });

  it('adds one ObjectId per distinct hex value, whatever its case', () => {
    expect(normaliseIdFilter({ _id: { $in: [HEX, HEX.toUpperCase()] } })).toEqual({
      _id: { $in: [oid(HEX), HEX, HEX.toUpperCase()] },
    });
  });

  it('does not modify its input', () => {
    const filter = { _id: { $in: [HEX] } };
    normaliseIdFilter(filter);
    expect(filter).toEqual({ _id: { $in: [HEX] } });
  });
});

describe('recordIdCandidates', () => {
  it('gives the ObjectId and the string for 24 hex digits', () => {
    const [first, second, ...rest] = recordIdCandidates(HEX);
    expect(first).toBeInstanceOf(ObjectId);
    expect((first as ObjectId).toHexString()).toBe(HEX);
    expect(second).toBe(HEX);
    expect(rest).toEqual([]);
  });

  it.each(['my-record', '42', 'abcdefghijkl', `${HEX}f`, 'ghghghghghghghghghghghgh'])('gives only the string for %j', (id) => {
    expect(recordIdCandidates(id)).toEqual([id]);
  });
});

describe('validateRecordId', () => {
  it.each(['a', HEX, 'with space', 'ünïcödé', 'x'.repeat(1024), 'é'.repeat(512)])('accepts %j', (id) => {
    expect(validateRecordId(id)).toBe(id);
  });

  it.each([
    ['empty', ''],
    ['NUL', 'a\0b'],
    ['1025 bytes', 'x'.repeat(1025)],
    ['1026 bytes of 2-byte characters', 'é'.repeat(513)],
  ])('refuses %s', (_what, id) => {
    const err = apiError(() => validateRecordId(id));
    expect(err.status).toBe(400);
    expect(err.code).toBe('invalid_id');
  });
});
