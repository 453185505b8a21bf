/**
 * What a replacement or a merge asks of one record, checked before the record is looked up: a
 * replacement is a storable record that keeps the record's `_id`; a merge is either plain fields
 * (set on the record) or update operators that cannot run code, move data out or change `_id`.
 */
import type { Document } from 'mongodb';
import isPlainObject from 'is-plain-obj';
import { badRequest } from '../errors.js';
import { immutableId } from './errors.js';
import { assertStorableFieldName, assertStorableFieldNames } from './field-names.js';
import { assertNoForbiddenOperators } from './operators.js';
import { assertStorableRecord } from './record-rules.js';

/** Update operators a merge may use (everything that cannot run code or move data out). */
const MERGE_OPERATORS = new Set([
  '$set',
  '$unset',
  '$inc',
  '$mul',
  '$min',
  '$max',
  '$rename',
  '$currentDate',
  '$push',
  '$pull',
  '$pullAll',
  '$addToSet',
  '$pop',
]);

/** The update a merge body stands for: plain fields are merged with `$set`, operators are taken as they are. */
export function mergeUpdate(body: unknown): Document {
  // A body that is one whole double is a Double (number-literals.ts), an object but no record.
  if (!isPlainObject(body)) throw badRequest('invalid_body', 'The body must be a JSON object.');
  const keys = Object.keys(body);
  if (keys.length === 0) throw badRequest('empty_update', 'The body has no fields to change.');
  const operatorKeys = keys.filter((k) => k.startsWith('$'));
  if (operatorKeys.length === 0) {
    assertStorableRecord(body, 'The body');
    if ('_id' in body) throw immutableId();
    return { $set: body };
  }
  if (operatorKeys.length !== keys.length) {
    throw badRequest('mixed_update', 'Use either plain fields (merged with $set) or update operators, not both.');
  }
  for (const op of operatorKeys) {
    if (!MERGE_OPERATORS.has(op)) throw badRequest('forbidden_operator', `Update operator "${op}" is not allowed.`, { operator: op });
    const arg = (body as Document)[op];
    if (typeof arg !== 'object' || arg === null || Array.isArray(arg))
      throw badRequest('invalid_update', `The argument of "${op}" must be an object.`);
    if (Object.keys(arg).some((f) => f === '_id' || f.startsWith('_id.'))) throw immutableId();
    for (const [field, value] of Object.entries(arg as Document)) {
      assertStorableFieldName(field);
      if (op === '$rename' && typeof value === 'string') assertStorableFieldName(value);
      else assertStorableFieldNames(value, field);
    }
  }
  assertNoForbiddenOperators(body, 'the update');
  return body as Document;
}

/**
 * The record a replacement stores in place of the one whose `_id` is `id`, without `_id`: a body
 * may repeat the record's `_id` (as read, so compared as text) but not name another one.
 */
export function replacementFor(record: Document, id: unknown): Document {
  if ('_id' in record && String(record._id) !== String(id)) {
    throw badRequest('id_mismatch', 'The body\'s "_id" differs from the record id in the URL; _id cannot be changed.');
  }
  const { _id: _ignored, ...replacement } = record;
  return replacement;
}
