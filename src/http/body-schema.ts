/**
 * Request bodies declared as zod schemas, parsed once into typed values before the handler runs
 * (request-check.ts). Every mistake is a 400 that names the offending field: unknown keys
 * (`unknown_field`), wrong or missing values (`invalid_field`), or a body that is not a JSON
 * object at all (`invalid_body`). The messages describe the expected body with the schema's
 * description (zod's `.describe`, which the OpenAPI document shows too).
 */
import type { z } from 'zod';
import { badRequest } from '../errors.js';

function valueAt(body: unknown, path: readonly PropertyKey[]): unknown {
  let value = body;
  for (const key of path) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

/** What a schema's error messages say is expected: its description, or the names of its fields. */
function expectedOf(schema: z.ZodType): string {
  if (schema.description !== undefined) return schema.description;
  const shape = (schema as { shape?: Record<string, unknown> }).shape;
  const names = Object.keys(shape ?? {});
  return names.length === 0 ? 'an empty object' : `an object {${names.map((n) => `"${n}"`).join(', ')}}`;
}

/** Parses `body` with an object schema (unknown keys refused when it is strict). */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  const expected = expectedOf(schema);
  if (body === undefined || body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw badRequest('invalid_body', `The request body must be a JSON object: ${expected}.`);
  }
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const issues = result.error.issues;
  const unknown = issues.flatMap((i) => (i.code === 'unrecognized_keys' ? i.keys : []));
  if (unknown.length > 0) {
    throw badRequest(
      'unknown_field',
      `Unknown field${unknown.length > 1 ? 's' : ''} ${unknown.map((k) => `"${k}"`).join(', ')}. Expected ${expected}.`,
      {
        fields: unknown,
      },
    );
  }
  const problems = issues.map((i) => {
    const field = i.path.map(String).join('.');
    const message = valueAt(body, i.path) === undefined ? 'This field is required.' : i.message;
    return { field, message };
  });
  const first = problems[0] ?? { field: '', message: 'Invalid input.' };
  throw badRequest('invalid_field', `Field "${first.field}": ${first.message}`, { fields: problems });
}
