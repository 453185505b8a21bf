/**
 * Field names that records may not use, at any depth: a double quote. FerretDB v1's SQLite
 * backend (the local runtime's database) writes field names into its stored JSON unescaped, so a
 * single such name is accepted and then makes the whole collection unreadable: every later query
 * on it fails. The rule holds on every engine, so records stay portable between the local and
 * the compose runtime. (`$`-prefixed names are refused separately, as operators.)
 */
import { badRequest } from '../errors.js';

const FORBIDDEN = '"';

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  // Extended-JSON values (ObjectId, Date, Binary, ...) are class instances, not sub-documents.
  return proto === Object.prototype || proto === null;
}

function refuse(name: string, path: string): never {
  throw badRequest('invalid_field_name', `Field names may not contain a double quote (${JSON.stringify(path === '' ? name : `${path}.${name}`)}).`, {
    field: name,
  });
}

/** Checks one field name or dotted path given directly (update operator keys, $rename targets). */
export function assertStorableFieldName(name: string, path = ''): void {
  if (name.includes(FORBIDDEN)) refuse(name, path);
}

/** Checks every field name inside a record or sub-document, arrays included. */
export function assertStorableFieldNames(value: unknown, path = ''): void {
  if (Array.isArray(value)) {
    value.forEach((item, i) => assertStorableFieldNames(item, path === '' ? String(i) : `${path}.${i}`));
    return;
  }
  if (!isPlainObject(value)) return;
  for (const [name, child] of Object.entries(value)) {
    assertStorableFieldName(name, path);
    assertStorableFieldNames(child, path === '' ? name : `${path}.${name}`);
  }
}
