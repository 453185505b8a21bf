/**
 * The `fields` parameter of a collection read in CSV: the columns, in order, as dotted paths
 * (`fields=_id,name,loc.lat`). Only CSV has columns to choose; other formats refuse it.
 */
import { badRequest } from '../errors.js';
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
    if (field === '' || field.split('.').some((part) => part === '')) {
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
