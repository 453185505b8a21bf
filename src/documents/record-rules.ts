/**
 * What a record must be to be stored, wherever it comes from: a JSON object, with no field named
 * like an operator (`$where`, `$set`, ...) at its top, no operator that runs code or writes
 * elsewhere anywhere in it, and no field name the service refuses at any depth (control
 * characters, see field-names.ts). The REST API's writes and the records tasks write through
 * the worker's data store both check it here, so neither path stores what the other refuses.
 */
import type { Document } from 'mongodb';
import isPlainObject from 'is-plain-obj';
import { badRequest } from '../errors.js';
import { parseJsonValue } from './extended-json.js';
import { assertStorableFieldNames } from './field-names.js';
import { assertNoForbiddenOperators } from './operators.js';

/**
 * Throws the request error that says what is wrong with `value`; `what` names it ("The record",
 * "Record 3"). `keysChecked`: every key below its top level is known to pass (a request body the
 * body parser vouched for, see isVouchedStorable), so only its own keys are checked.
 */
export function assertStorableRecord(value: unknown, what: string, keysChecked = false): Document {
  // Not only `typeof 'object'`: a body that is one whole double is a Double, which the driver cannot store as a record.
  if (!isPlainObject(value)) throw badRequest('invalid_body', `${what} must be a JSON object.`);
  for (const key of Object.keys(value)) {
    if (key.startsWith('$')) throw badRequest('invalid_field_name', `Field names may not start with "$" ("${key}").`);
  }
  if (keysChecked) return value as Document;
  assertNoForbiddenOperators(value, 'the record');
  assertStorableFieldNames(value);
  return value as Document;
}

/**
 * A record that arrived as plain JSON outside an HTTP request (a task's `record` argument), read
 * as the REST API reads an inserted body: Extended JSON revived (`{"$date": ...}` → a date), keys
 * such as `__proto__` refused (extended-json.ts), and then the rules above.
 */
export function storableRecordFromJson(value: unknown): Document {
  return assertStorableRecord(parseJsonValue(value, 'the record'), 'The record');
}
