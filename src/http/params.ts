/**
 * URL parameters and JSON bodies: only known parameters and fields, each parameter given at most
 * once. Routes declare theirs and `serve` checks them (request-check.ts); the admin site's own
 * endpoints, which are not in the route table, name theirs here.
 */
import type { Request } from 'express';
import { badRequest } from '../errors.js';

/** Refuse misspelled parameters instead of silently ignoring them (e.g. `pagesize`). */
export function checkParams(req: Request, allowed: readonly string[]): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [key, value] of Object.entries(req.query)) {
    if (!allowed.includes(key)) {
      // `_` (a cache buster) is accepted but not worth naming to a caller who misspelled something.
      const named = allowed.filter((a) => a !== '_');
      throw badRequest(
        'unknown_parameter',
        named.length === 0
          ? `Unknown query parameter "${key}". This endpoint takes no query parameters.`
          : `Unknown query parameter "${key}". Allowed here: ${named.join(', ')}.`,
      );
    }
    if (Array.isArray(value)) throw badRequest('repeated_parameter', `The "${key}" parameter is given more than once.`);
    out[key] = value as string | undefined;
  }
  return out;
}

/** The query of a request `serve` has checked against its route's declaration: each name at most once. */
export function queryOf(req: Request): Record<string, string | undefined> {
  return req.query as Record<string, string | undefined>;
}

/** The JSON body must be an object with only the given keys. */
export function objectBody(body: unknown, allowed: readonly string[]): Record<string, unknown> {
  if (body === undefined) throw badRequest('missing_body', 'A JSON object body is required.');
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw badRequest('invalid_body', 'The request body must be a JSON object.');
  }
  for (const key of Object.keys(body)) {
    if (!allowed.includes(key)) {
      throw badRequest('unknown_field', `Unknown field "${key}". Allowed fields: ${allowed.join(', ')}.`);
    }
  }
  return body as Record<string, unknown>;
}
