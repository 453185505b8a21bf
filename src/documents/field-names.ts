/**
 * Field names that records may not use, at any depth: control characters (U+0000–U+001F, U+007F).
 * They are invisible in every rendering, cannot be written as XML element or attribute names,
 * and a name that cannot be seen or typed cannot be queried, projected or removed by a user. The
 * rule holds on every engine, so records stay portable between the local and the compose
 * runtime. (`$`-prefixed names are refused separately, as operators.)
 */
import isPlainObject from 'is-plain-obj';
import { badRequest } from '../errors.js';

const FORBIDDEN = /[\u0000-\u001f\u007f]/;

function refuse(name: string, path: string): never {
  throw badRequest(
    'invalid_field_name',
    `Field names may not contain control characters (${JSON.stringify(path === '' ? name : `${path}.${name}`)}).`,
    {
      field: name,
    },
  );
}

/** Checks one field name or dotted path given directly (update operator keys, $rename targets). */
export function assertStorableFieldName(name: string, path = ''): void {
  if (FORBIDDEN.test(name)) refuse(name, path);
}

/** Checks every field name inside a record or sub-document, arrays included. */
export function assertStorableFieldNames(value: unknown, path = ''): void {
  // Only objects and arrays hold field names: a path is built only for those (records are mostly plain values).
  const within = (key: string | number): string => (path === '' ? String(key) : `${path}.${key}`);
  if (Array.isArray(value)) {
    value.forEach((item, i) => {
      if (typeof item === 'object') assertStorableFieldNames(item, within(i));
    });
    return;
  }
  // Extended-JSON values (ObjectId, Date, Binary, ...) are class instances, not sub-documents.
  if (!isPlainObject(value)) return;
  for (const name of Object.keys(value)) {
    assertStorableFieldName(name, path);
    const child = value[name];
    if (typeof child === 'object') assertStorableFieldNames(child, within(name));
  }
}
