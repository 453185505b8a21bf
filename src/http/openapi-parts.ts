/**
 * Pieces the routes' OpenAPI operations share: the error responses, the format and paging
 * parameters, and small builders for query parameters, JSON bodies and answers. A route's
 * parameters and body are also what `serve` enforces (request-check.ts).
 */
import type { Answer, Operation, QueryParameter, Schema } from './route-table.js';

export const ERROR_SCHEMA: Record<string, unknown> = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['status', 'code', 'message'],
      properties: { status: { type: 'integer' }, code: { type: 'string' }, message: { type: 'string' }, detail: {} },
    },
  },
};

export const ENVELOPE_SCHEMA: Record<string, unknown> = {
  type: 'object',
  required: ['count', 'meta', 'next', 'previous', 'results'],
  properties: {
    count: { type: 'integer', description: 'Total number of matching records (not the page length).' },
    meta: {
      type: 'object',
      properties: { page: { type: 'integer' }, page_size: { type: 'integer' }, pages: { type: 'integer' } },
    },
    next: { type: ['string', 'null'], format: 'uri' },
    previous: { type: ['string', 'null'], format: 'uri' },
    results: { type: 'array', items: {} },
  },
};

export const ENVELOPE_REF: Schema = { $ref: '#/components/schemas/Envelope' };

/** An optional query parameter. */
export const param = (name: string, description: string, schema: QueryParameter['schema'] = { type: 'string' }): QueryParameter => ({
  name,
  in: 'query',
  required: false,
  description,
  schema,
});

export const ERRORS: Record<string, Answer> = Object.fromEntries(
  [
    ['400', 'Bad input'],
    ['401', 'Not authenticated'],
    ['403', 'Not permitted or CSRF failure'],
    ['404', 'No such database, collection or record'],
    ['413', 'Body too large'],
    ['415', 'Body is not JSON'],
    ['503', 'Database or broker unavailable'],
  ].map(([code, description]) => [
    code,
    { description: description as string, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
  ]),
);

export const COMMON: QueryParameter[] = [
  param('format', 'Output format (csv and ndjson: the records only; also as a /.csv or /.ndjson path suffix)', {
    enum: ['api', 'json', 'jsonp', 'xml', 'csv', 'ndjson'],
  }),
  param('callback', 'JSONP callback name'),
  param('_', "Ignored: a cache buster (jQuery's JSONP requests add one)"),
];

export const PAGING: QueryParameter[] = [
  param('page', 'Page number (default 1; beyond the last → last page)', { type: 'integer' }),
  param('page_size', 'Records per page (default 10; 0 = all, streamed)', { type: 'integer', minimum: 0 }),
];

/** A JSON answer. */
export const ok = (description: string, schema: Schema = { type: 'object' }): Answer => ({
  description,
  content: { 'application/json': { schema } },
});

/** A required JSON request body. */
export const jsonBody = (schema: Schema): NonNullable<Operation['request']> => ({
  body: { required: true, content: { 'application/json': { schema } } },
});
