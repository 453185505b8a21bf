/**
 * URL parameters and JSON bodies of the API's endpoints: only known parameters and fields, each
 * parameter given at most once.
 */
import type { Request } from 'express';
import { badRequest } from '../errors.js';

/** Understood everywhere: the output format, the JSONP callback and jQuery's cache buster `_`. */
export const COMMON_PARAMS: readonly string[] = ['format', 'callback', '_'];
/** Every paged listing's parameters. */
export const PAGE_PARAMS: readonly string[] = [...COMMON_PARAMS, 'page', 'page_size'];

/** Refuse misspelled parameters instead of silently ignoring them (e.g. `pagesize`). */
export function checkParams(req: Request, allowed: readonly string[]): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [key, value] of Object.entries(req.query)) {
    if (!allowed.includes(key)) {
      throw badRequest(
        'unknown_parameter',
        `Unknown query parameter "${key}". Allowed here: ${allowed.filter((a) => a !== '_').join(', ')}.`,
      );
    }
    if (Array.isArray(value)) throw badRequest('repeated_parameter', `The "${key}" parameter is given more than once.`);
    out[key] = value as string | undefined;
  }
  return out;
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
