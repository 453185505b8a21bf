/**
 * Every route the app really mounts (its router stack, walked) is in the OpenAPI document, and
 * everything the document lists is mounted — method by method. Browser pages and their assets
 * are the only routes left out of the document, and only those the route table declares as such.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApp, type TestApp } from '../../support/app.js';
import { mountedRoutes } from '../../support/mounted-routes.js';
import { PAGES, type Page } from '../../../src/app/route-table.js';

/** Compared without parameter names (`:db` and `{database}` are the same segment) or a final slash. */
const shape = (method: string, path: string) => `${method} ${path.replace(/:[A-Za-z0-9_]+|\{[^}]+\}/g, '{}').replace(/(.)\/$/, '$1')}`;

const pages: readonly Page[] = Object.values(PAGES);
const underTree = (path: string) => pages.some((p) => p.tree === true && (path === p.path || path.startsWith(`${p.path}/`)));

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => {
  await app?.close();
});

function documented(doc: { paths: Record<string, Record<string, unknown>> }): string[] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.keys(item)
      .filter((key) => ['get', 'put', 'post', 'delete', 'patch'].includes(key))
      .map((method) => shape(method.toUpperCase(), path)),
  );
}

describe('the route table', () => {
  it('documents every mounted route and mounts every documented one', async () => {
    const doc = JSON.parse((await call(app.url, 'GET', '/api/schema/')).text);
    const inDocument = new Set(documented(doc));
    const single = new Set(pages.filter((p) => p.tree !== true).flatMap((p) => p.methods.map((m) => shape(m, p.path))));
    const all = mountedRoutes(app.app);
    const mounted = all.filter((r) => !underTree(r.path));
    const mountedShapes = new Set(mounted.map((r) => shape(r.method, r.path)));
    const undocumented = [...mountedShapes].filter((s) => !inDocument.has(s) && !single.has(s));
    const notMounted = [...inDocument].filter((s) => !mountedShapes.has(s));
    expect(undocumented).toEqual([]);
    expect(notMounted).toEqual([]);
    // The two the hand-written document had missed.
    expect(inDocument).toContain(shape('GET', '/api/queue/dead-letters/'));
    expect(inDocument).toContain(shape('DELETE', '/api/queue/dead-letters/'));
    expect(inDocument).toContain(shape('GET', '/api/metrics'));
    // Every page the table declares is mounted (a tree: something under it).
    for (const page of pages) {
      const found = all.some((r) =>
        page.tree === true ? r.path === page.path || r.path.startsWith(`${page.path}/`) : r.path === page.path,
      );
      expect(found, page.path).toBe(true);
    }
  });

  it('lists the parts of the API at its root, as before, and the manual', async () => {
    const res = await call(app.url, 'GET', '/api/');
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text)).toEqual({
      queue: `${app.url}/api/queue/`,
      'user tasks': `${app.url}/api/queue/usertasks/`,
      catalog: `${app.url}/api/catalog/data/`,
      'data store': `${app.url}/api/data_store/data/`,
      'user profile': `${app.url}/api/user/`,
      schema: `${app.url}/api/schema/`,
      health: `${app.url}/api/health/`,
      manual: `${app.url}/api/manual/`,
    });
  });
});
