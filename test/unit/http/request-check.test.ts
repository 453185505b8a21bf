/** serve's check of the query and the body against a route's declaration, before the handler. */
import type { Request } from 'express';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ApiError } from '../../../src/errors.js';
import { COMMON, jsonBody, param } from '../../../src/http/openapi-parts.js';
import { checkDeclared } from '../../../src/http/request-check.js';
import type { Operation } from '../../../src/http/route-table.js';
import { QUEUE_ROUTES } from '../../../src/queue/api/route-table.js';

const answers = { responses: { 200: { description: 'ok' } } };

function run(operation: Operation, req: { method: string; query?: Record<string, unknown>; body?: unknown; form?: boolean }) {
  const request = {
    method: req.method,
    query: req.query ?? {},
    body: req.body,
    is: (type: string) => (req.form === true && type === 'application/x-www-form-urlencoded' ? type : false),
  } as unknown as Request;
  let passed: unknown = 'not called';
  checkDeclared({ [req.method === 'HEAD' ? 'GET' : req.method]: operation })(request, {} as never, (err?: unknown) => {
    passed = err;
  });
  if (passed === 'not called') throw new Error('next was not called');
  return { error: passed instanceof ApiError ? `${passed.status} ${passed.code}: ${passed.message}` : passed, body: request.body };
}

describe('the declared query', () => {
  const listing: Operation = { summary: 'list', parameters: [...COMMON, param('page', 'p')], ...answers };

  it('takes the declared names (also the cache buster `_`) and refuses others by name', () => {
    expect(run(listing, { method: 'GET', query: { page: '2', format: 'json', _: '123' } }).error).toBeUndefined();
    expect(run(listing, { method: 'HEAD', query: { page: '2' } }).error).toBeUndefined();
    expect(run(listing, { method: 'GET', query: { pagesize: '2' } }).error).toBe(
      '400 unknown_parameter: Unknown query parameter "pagesize". Allowed here: format, callback, page.',
    );
    expect(run({ summary: 'none', ...answers }, { method: 'GET', query: { x: '1' } }).error).toBe(
      '400 unknown_parameter: Unknown query parameter "x". This endpoint takes no query parameters.',
    );
  });

  it('refuses a name given twice', () => {
    expect(run(listing, { method: 'GET', query: { page: ['1', '2'] } }).error).toMatch(/^400 repeated_parameter/);
  });
});

describe('the declared body', () => {
  it('checks a closed object outline: present when required, an object, only the listed fields', () => {
    const submit = QUEUE_ROUTES.run.operations.POST as Operation;
    const post = (body: unknown) => run(submit, { method: 'POST', body }).error;
    expect(post({ function: 't', args: [1] })).toBeUndefined();
    expect(post(undefined)).toBe('400 missing_body: A JSON object body is required.');
    expect(post([])).toBe('400 invalid_body: The request body must be a JSON object.');
    expect(post(null)).toBe('400 invalid_body: The request body must be a JSON object.');
    expect(post({ function: 't', eta: 'now' })).toBe(
      '400 unknown_field: Unknown field "eta". Allowed fields: function, queue, args, kwargs, tags.',
    );
  });

  it('lets an optional body be left out', () => {
    const revoke = QUEUE_ROUTES.revoke.operations.POST as Operation;
    expect(run(revoke, { method: 'POST', body: undefined }).error).toBeUndefined();
    expect(run(revoke, { method: 'POST', body: { terminate: true, now: 1 } }).error).toMatch(/^400 unknown_field: Unknown field "now"/);
  });

  it('leaves an open schema (records) to the handler', () => {
    const insert: Operation = { summary: 'insert', request: jsonBody({ type: 'object' }), ...answers };
    expect(run(insert, { method: 'POST', body: { anything: 1 } }).error).toBeUndefined();
    expect(run(insert, { method: 'POST', body: undefined }).error).toBeUndefined();
  });

  it('parses a zod body with its schema and hands the handler the result', () => {
    const schema = z.strictObject({ n: z.number().default(3), name: z.string() }).describe('an object {"name": string}');
    const op: Operation = { summary: 'z', request: jsonBody(schema), ...answers };
    expect(run(op, { method: 'POST', body: { name: 'a' } })).toEqual({ error: undefined, body: { n: 3, name: 'a' } });
    expect(run(op, { method: 'POST', body: { name: 'a', x: 1 } }).error).toBe(
      '400 unknown_field: Unknown field "x". Expected an object {"name": string}.',
    );
    expect(run(op, { method: 'POST', body: { name: 5 } }).error).toMatch(/^400 invalid_field: Field "name"/);
    expect(run(op, { method: 'POST', body: undefined }).error).toMatch(/^400 invalid_body/);
  });

  it('uses the form schema for a form post', () => {
    const json = z.strictObject({ a: z.string() });
    const form = z.object({ b: z.string().optional() });
    const op: Operation = {
      summary: 'both',
      request: {
        body: { required: true, content: { 'application/json': { schema: json }, 'application/x-www-form-urlencoded': { schema: form } } },
      },
      ...answers,
    };
    expect(run(op, { method: 'POST', body: { b: 'x', other: 'y' }, form: true }).error).toBeUndefined();
    expect(run(op, { method: 'POST', body: { b: 'x' } }).error).toMatch(/^400 unknown_field/);
  });

  it('leaves methods the route does not declare to the 405', () => {
    expect(run({ summary: 'g', ...answers }, { method: 'GET', query: {} }).error).toBeUndefined();
    const onlyGet = checkDeclared({ GET: { summary: 'g', ...answers } });
    let err: unknown = 'not called';
    onlyGet({ method: 'PUT', query: { x: '1' } } as unknown as Request, {} as never, (e?: unknown) => {
      err = e;
    });
    expect(err).toBeUndefined();
  });
});
