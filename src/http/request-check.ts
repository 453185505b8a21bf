/**
 * The check `serve` runs before a route's handler: the query names and the body against the
 * operation the route declares for the request's method. The declaration is the one the OpenAPI
 * document is made from, so a parameter or field the document does not list is refused.
 *
 * Query: only declared names, each at most once (a misspelling such as `pagesize` is a 400
 * naming it, not silently ignored). Body, by how the operation declares it:
 * - a zod schema: the body is parsed with it and replaced by the result (see parseBody);
 * - a JSON schema of an object with `additionalProperties: false`: the body must be present
 *   when required, a JSON object, and have no field the schema does not list; its values are
 *   the handler's to check;
 * - any other JSON schema (records, whose fields are the user's): the handler checks it.
 */
import type { Request, RequestHandler } from 'express';
import isPlainObject from 'is-plain-obj';
import type { ZodType } from 'zod';
import { badRequest } from '../errors.js';
import { parseBody } from './body-schema.js';
import { checkParams } from './params.js';
import type { Content, Operation, Verb } from './operation.js';

const FORM = 'application/x-www-form-urlencoded';

/** The names `operation` declares in the query. */
export function declaredQueryNames(operation: Operation): string[] {
  return (operation.parameters ?? []).map((p) => p.name);
}

function isZod(schema: unknown): schema is ZodType {
  return typeof schema === 'object' && schema !== null && typeof (schema as { safeParse?: unknown }).safeParse === 'function';
}

/** The declared schema for the body as it was read: the form's for a form post, the JSON one otherwise. */
function schemaFor(req: Request, content: Content): unknown {
  const form = req.is(FORM) === FORM;
  const type = form ? FORM : Object.keys(content).find((t) => t !== FORM);
  return type === undefined ? undefined : content[type]?.schema;
}

/** The fields of a closed object schema (`additionalProperties: false`), or undefined for any other schema. */
function closedFields(schema: unknown): string[] | undefined {
  if (typeof schema !== 'object' || schema === null) return undefined;
  const s = schema as { type?: unknown; additionalProperties?: unknown; properties?: Record<string, unknown> };
  if (s.type !== 'object' || s.additionalProperties !== false) return undefined;
  return Object.keys(s.properties ?? {});
}

function checkBody(req: Request, request: NonNullable<Operation['request']>): void {
  const schema = schemaFor(req, request.body.content);
  if (isZod(schema)) {
    if (req.body === undefined && !request.body.required) return;
    req.body = parseBody(schema, req.body);
    return;
  }
  const fields = closedFields(schema);
  if (fields === undefined) return;
  if (req.body === undefined) {
    if (request.body.required) throw badRequest('missing_body', 'A JSON object body is required.');
    return;
  }
  // Not `typeof 'object'`: a parser that keeps number literals returns a top-level number as an object.
  if (!isPlainObject(req.body)) throw badRequest('invalid_body', 'The request body must be a JSON object.');
  for (const key of Object.keys(req.body)) {
    if (!fields.includes(key)) throw badRequest('unknown_field', `Unknown field "${key}". Allowed fields: ${fields.join(', ')}.`);
  }
}

/** The step `serve` puts before a route's handlers (see the module comment). */
export function checkDeclared(operations: Readonly<Partial<Record<Verb, Operation>>>): RequestHandler {
  // Each method's query names, listed once rather than for every request.
  const queryNames = new Map(Object.entries(operations).map(([verb, operation]) => [verb, declaredQueryNames(operation)]));
  return (req, _res, next) => {
    const verb = req.method === 'HEAD' ? 'GET' : req.method;
    const operation = operations[verb as Verb];
    // OPTIONS and undeclared methods are answered by the handler step (204, or 405).
    if (operation === undefined) return next();
    try {
      checkParams(req, queryNames.get(verb) ?? []);
      if (operation.request !== undefined) checkBody(req, operation.request);
    } catch (err) {
      return next(err);
    }
    next();
  };
}
