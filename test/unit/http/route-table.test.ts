/** The route declarations' helpers: OpenAPI paths, filled-in paths, and serve()'s refusal of handlers that differ from the declaration. */
import { Router } from 'express';
import { describe, expect, it } from 'vitest';
import { openApiPath, parameterNames, pathOf, route, serve } from '../../../src/http/route-table.js';

const ok = { summary: 's', responses: { 200: { description: 'ok' } } };

describe('route declarations', () => {
  it.each([
    ['/api/data_store/data/:db/:col/:id/', {}, '/api/data_store/data/{database}/{collection}/{id}/'],
    ['/api/queue/task/:id/revoke/', { id: 'task_id' }, '/api/queue/task/{task_id}/revoke/'],
    ['/api/client/python/:file', { file: 'wheel' }, '/api/client/python/{wheel}'],
    ['/api/health/', {}, '/api/health/'],
  ])('writes %s as the document does', (path, params, expected) => {
    const decl = route(path, { GET: ok }, params);
    expect(openApiPath(decl, path)).toBe(expected);
    expect(parameterNames(decl, path).map((p) => p.name)).toEqual([...expected.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]));
  });

  it('fills in a path, each value encoded, and refuses a missing value', () => {
    const decl = route('/run/:task/', { GET: ok });
    expect(pathOf(decl, { task: 'a/b c' })).toBe('/run/a%2Fb%20c/');
    expect(() => pathOf(decl)).toThrow(':task');
  });

  it('serves exactly the declared methods', () => {
    const decl = route('/x/', { GET: ok, POST: ok });
    const handler = async () => undefined;
    expect(() => serve(Router(), decl, { GET: handler })).toThrow('declares GET, POST but is given handlers for GET');
    expect(() => serve(Router(), decl, { GET: handler, POST: handler, DELETE: handler })).toThrow('DELETE');
    const router = Router();
    serve(router, decl, { POST: handler, GET: handler });
    expect(router.stack).toHaveLength(1);
  });
});
