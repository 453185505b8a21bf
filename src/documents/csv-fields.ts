/**
 * The `fields` parameter of a collection read in CSV: the columns, in order, as dotted paths
 * (`fields=_id,name,loc.lat`), written as the CSV header writes them: a "." or "\\" that is part
 * of a key is escaped by a backslash (`a\.b` is the key "a.b", see columnKeys). Only CSV has
 * columns to choose; other formats refuse it.
 */
import { badRequest } from '../errors.js';
import { columnKeys } from '../render/csv-cells.js';
import type { Format } from '../render/index.js';

const MAX_FIELDS = 1000;

export function parseCsvFields(raw: string | undefined, format: Format): readonly string[] | undefined {
  if (raw === undefined) return undefined;
  if (format !== 'csv') {
    throw badRequest('invalid_combination', 'The "fields" parameter chooses CSV columns: use it with format=csv.', { parameter: 'fields' });
  }
  const fields = raw.split(',');
  if (fields.length > MAX_FIELDS) throw badRequest('invalid_fields', `At most ${MAX_FIELDS} fields.`, { parameter: 'fields' });
  const seen = new Set<string>();
  for (const field of fields) {
    const keys = columnKeys(field);
    if (keys === undefined) {
      throw badRequest('invalid_fields', `In "fields", a backslash escapes only "." or "\\" in a key; got ${JSON.stringify(field)}.`, {
        parameter: 'fields',
      });
    }
    if (keys.some((key) => key === '')) {
      throw badRequest('invalid_fields', `"fields" must be comma-separated field names or dotted paths; got ${JSON.stringify(raw)}.`, {
        parameter: 'fields',
      });
    }
    if (/[\u0000-\u001f\u007f]/.test(field))
      throw badRequest('invalid_fields', 'Field names may not contain control characters.', { parameter: 'fields' });
    if (seen.has(field)) throw badRequest('invalid_fields', `The field "${field}" is listed twice.`, { parameter: 'fields' });
    seen.add(field);
  }
  return fields;
}
