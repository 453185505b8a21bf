/**
 * Every route the app really mounts (its router stack, walked) is in the OpenAPI document, and
 * everything the document lists is mounted — method by method. Browser pages and their assets
 * are the only routes left out of the document, and only those the route table declares as such.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApp, type TestApp } from '../../support/app.js';
import { mountedRoutes } from '../../support/mounted-routes.js';

/** Compared without parameter names (`:db` and `{database}` are the same segment) or a final slash. */
const shape = (method: string, path: string) =>
  `${method} ${path
    .replace(/:[A-Za-z0-9_]+|\{[^}]+\}/g, '{}')
    .replace(/(.)\/$/, '$1')}`;

const PAGES = ['GET /', 'GET /api/static/browsable.js'];
const PAGE_TREES = ['/api/admin', '/api/explore'];

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
    const pages = new Set(PAGES.map((p) => shape(...(p.split(' ') as [string, string]))));
    const mounted = mountedRoutes(app.app).filter(
      (r) => !PAGE_TREES.some((tree) => r.path === tree || r.path.startsWith(`${tree}/`)),
    );
    const mountedShapes = new Set(mounted.map((r) => shape(r.method, r.path)));
    const undocumented = [...mountedShapes].filter((s) => !inDocument.has(s) && !pages.has(s));
    const notMounted = [...inDocument].filter((s) => !mountedShapes.has(s));
    expect(undocumented).toEqual([]);
    expect(notMounted).toEqual([]);
    // The two the hand-written document had missed.
    expect(inDocument).toContain(shape('GET', '/api/queue/dead-letters/'));
    expect(inDocument).toContain(shape('DELETE', '/api/queue/dead-letters/'));
    expect(inDocument).toContain(shape('GET', '/api/metrics'));
  });
});
