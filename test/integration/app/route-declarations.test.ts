/**
 * What each route declares is what it enforces and what the OpenAPI document shows, for every
 * route in the app's route table (walked, not listed here): a query name the route does not
 * declare is a 400 naming it, and the document's query parameters and request bodies are the
 * declarations'.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApp, type TestApp } from '../../support/app.js';
import { apiMounts } from '../../../src/app/route-table.js';
import { openApiPath, type Operation, type Verb } from '../../../src/http/route-table.js';

let app: TestApp;
let token: string;
beforeAll(async () => {
  app = await startTestApp();
  await app.users.createUser({ username: 'declarations-root', password: 'pw-declarations-1', isSuperuser: true });
  token = await app.users.tokenFor('declarations-root');
});
afterAll(async () => {
  await app?.close();
});

interface Declared {
  path: string;
  verb: Verb;
  operation: Operation;
  /** The route's full express pattern, every parameter filled in with a plausible value. */
  concrete: string;
}

function declared(): Declared[] {
  const mounts = Object.values(apiMounts(app.ctx.documents));
  return mounts.flatMap(({ prefix, routes }) =>
    routes.flatMap((decl) =>
      Object.entries(decl.operations).map(([verb, operation]) => {
        const full = prefix + decl.path;
        return {
          path: openApiPath(decl, full),
          verb: verb as Verb,
          operation: operation as Operation,
          concrete: full.replace(/:([A-Za-z0-9_]+)/g, (_m, name: string) => `declared_${name}`),
        };
      }),
    ),
  );
}

const UNDECLARED = 'zz_not_declared';

describe('the route declarations', () => {
  it('walks the whole table', () => {
    const all = declared();
    // Every family is there (the walk is over the table, so a new route is covered without a change here).
    for (const path of [
      '/api/',
      '/api/auth/login/',
      '/api/data_store/data/{database}/{collection}/',
      '/api/queue/run/{task}/',
      '/api/links/',
    ]) {
      expect(
        all.some((d) => d.path === path),
        path,
      ).toBe(true);
    }
    expect(all.length).toBeGreaterThan(40);
  });

  it('refuses, on every route and method, a query name the route does not declare, naming it', async () => {
    const failures: string[] = [];
    for (const { verb, concrete, operation } of declared()) {
      // With every declared parameter left out, the undeclared one is the only problem of the query.
      const res = await call(app.url, verb, `${concrete}?${UNDECLARED}=1`, { token });
      const error = (res.json as { error?: { code?: string; message?: string } } | undefined)?.error;
      if (res.status !== 400 || error?.code !== 'unknown_parameter' || !error.message?.includes(`"${UNDECLARED}"`)) {
        failures.push(`${verb} ${concrete}: ${res.status} ${res.text.slice(0, 200)}`);
      }
      // The declared names themselves pass the check (their values may still be refused by the
      // route); tried with reads only, as a write with every parameter could change something.
      const names = (operation.parameters ?? []).map((p) => p.name);
      if (verb === 'GET' && names.length > 0) {
        const query = names.map((n) => `${encodeURIComponent(n)}=${n === 'format' ? 'json' : ''}`).join('&');
        const ok = await call(app.url, verb, `${concrete}?${query}`, { token });
        const code = (ok.json as { error?: { code?: string } } | undefined)?.error?.code;
        if (code === 'unknown_parameter') failures.push(`${verb} ${concrete}: refused its own declared ${names.join(', ')}`);
      }
    }
    expect(failures).toEqual([]);
  });

  it('shows in the OpenAPI document exactly the declared query parameters and bodies', async () => {
    const doc = JSON.parse((await call(app.url, 'GET', '/api/schema/')).text) as {
      paths: Record<
        string,
        Record<
          string,
          {
            parameters?: { in: string }[];
            requestBody?: { required?: boolean; content: Record<string, { schema: Record<string, unknown> }> };
          }
        >
      >;
    };
    for (const { path, verb, operation } of declared()) {
      const documented = doc.paths[path]?.[verb.toLowerCase()];
      expect(documented, `${verb} ${path}`).toBeDefined();
      const query = (documented?.parameters ?? []).filter((p) => p.in === 'query');
      expect(query, `${verb} ${path}`).toEqual(operation.parameters ?? []);
      const body = operation.request?.body;
      if (body === undefined) {
        expect(documented?.requestBody, `${verb} ${path}`).toBeUndefined();
        continue;
      }
      expect(documented?.requestBody?.required ?? false, `${verb} ${path}`).toBe(body.required);
      expect(Object.keys(documented?.requestBody?.content ?? {}), `${verb} ${path}`).toEqual(Object.keys(body.content));
      for (const [type, { schema }] of Object.entries(body.content)) {
        const shown = documented?.requestBody?.content[type]?.schema;
        if (schema !== undefined && typeof (schema as { safeParse?: unknown }).safeParse === 'function') {
          // A zod schema: the document lists the same fields.
          const shape = (schema as { shape?: Record<string, unknown> }).shape ?? {};
          expect(Object.keys((shown?.properties as Record<string, unknown> | undefined) ?? {}), `${verb} ${path} ${type}`).toEqual(
            Object.keys(shape),
          );
        } else {
          expect(shown, `${verb} ${path} ${type}`).toEqual(schema);
        }
      }
    }
  });

  it('reads a body with the parser its route declares, and none for a method the route does not serve', async () => {
    const verbs: Verb[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
    for (const { prefix, routes } of Object.values(apiMounts(app.ctx.documents))) {
      for (const decl of routes) {
        const unserved = verbs.find((v) => v !== 'GET' && decl.operations[v] === undefined);
        if (unserved === undefined) continue;
        const path = (prefix + decl.path).replace(/:([A-Za-z0-9_]+)/g, (_m, name: string) => `declared_${name}`);
        const res = await call(app.url, unserved, path, { token, rawBody: '{"not json' });
        expect(res.status, `${unserved} ${path}`).toBe(405);
      }
    }
    // A served method's body is read (and malformed JSON refused) before anything else.
    const served = await call(app.url, 'POST', '/api/links/', { token, rawBody: '{"not json' });
    expect(served.json.error.code).toBe('malformed_json');
  });
});
