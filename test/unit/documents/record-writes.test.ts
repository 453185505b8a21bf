/** What a merge or a replacement of one record may ask for, as tables of bodies and answers. */
import { ObjectId } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { mergeUpdate, replacementFor } from '../../../src/documents/record-writes.js';
import { apiError } from './api-error.js';

describe('mergeUpdate', () => {
  it.each([
    ['plain fields are set', { a: 1, 'b.c': 2 }, { $set: { a: 1, 'b.c': 2 } }],
    ['operators are taken as they are', { $inc: { n: 1 }, $unset: { old: '' } }, { $inc: { n: 1 }, $unset: { old: '' } }],
    ['a rename to a plain name', { $rename: { a: 'b' } }, { $rename: { a: 'b' } }],
  ])('%s', (_what, body, update) => {
    expect(mergeUpdate(body)).toEqual(update);
  });

  it.each([
    ['an array', [{ a: 1 }], 'invalid_body'],
    ['null', null, 'invalid_body'],
    ['a string', 'a', 'invalid_body'],
    ['an empty object', {}, 'empty_update'],
    ['plain fields that name _id', { _id: 1, a: 2 }, 'immutable_id'],
    ['plain fields and operators together', { a: 1, $set: { b: 2 } }, 'mixed_update'],
    ['an operator that is not allowed', { $where: { a: 1 } }, 'forbidden_operator'],
    ['an operator whose argument is not an object', { $set: [1] }, 'invalid_update'],
    ['an operator on _id', { $set: { _id: 2 } }, 'immutable_id'],
    ['an operator on a field inside _id', { $unset: { '_id.x': '' } }, 'immutable_id'],
    ['a value that runs code', { $set: { a: { $function: {} } } }, 'forbidden_operator'],
  ])('refuses %s', (_what, body, code) => {
    expect(apiError(() => mergeUpdate(body))).toMatchObject({ status: 400, code });
  });
});

describe('replacementFor', () => {
  const id = new ObjectId();

  it('drops the _id of the body, which the stored record keeps', () => {
    expect(replacementFor({ _id: id.toHexString(), a: 1 }, id)).toEqual({ a: 1 });
    expect(replacementFor({ a: 1 }, id)).toEqual({ a: 1 });
  });

  it('refuses a body naming another _id', () => {
    expect(apiError(() => replacementFor({ _id: 'other', a: 1 }, id))).toMatchObject({ status: 400, code: 'id_mismatch' });
  });
});
