import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import express, { Router } from 'express';
import { Histogram, Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpMetrics, recordRouteTemplates } from '../../../src/metrics/http-metrics.js';
import { BoundedLabel, OTHER, UNMATCHED_ROUTE, methodLabel, routeTemplate, statusLabel } from '../../../src/metrics/labels.js';

describe('route, method and status labels', () => {
  it.each([
    ['/api/data_store/data', '/:db/:col/', '/api/data_store/data/:db/:col/'],
    ['/api/health', '/', '/api/health/'],
    ['', '/', '/'],
    ['/api', ['/a', '/b'], '/api/a|/b'],
    ['/api', /^\/x$/, '/api^\\/x$'],
    ['/api', undefined, UNMATCHED_ROUTE],
  ])('%s + %s → %s', (base, path, expected) => {
    expect(routeTemplate(base, path)).toBe(expected);
  });

  it('keeps methods and statuses to fixed sets', () => {
    expect(methodLabel('GET')).toBe('GET');
    expect(methodLabel('PROPFIND')).toBe(OTHER);
    expect(statusLabel(404)).toBe('404');
    expect(statusLabel(0)).toBe(OTHER);
    expect(statusLabel(1000)).toBe(OTHER);
  });

  it('admits only a limited number of distinct values', () => {
    const label = new BoundedLabel(2);
    expect([label.label('a'), label.label('b'), label.label('c'), label.label('a')]).toEqual(['a', 'b', OTHER, 'a']);
  });
});

describe('route labels of real requests', () => {
  const registry = new Registry();
  const histogram = new Histogram({ name: 't_http', help: 'h', labelNames: ['route', 'method', 'status'], registers: [registry] });
  let url = '';
  let close: () => Promise<void> = async () => undefined;

  beforeAll(async () => {
    const app = express();
    recordRouteTemplates(app);
    app.use(httpMetrics(histogram));
    const docs = Router({ strict: true });
    docs.get('/:db/fail/', (_req, _res, next) => {
      next(Object.assign(new Error('nope'), { status: 403 }));
    });
    docs.get('/:db/:col/', (_req, res) => {
      res.json({ ok: true });
    });
    app.use('/api/data_store/data', docs);
    // One router (so the same route objects) under two mount paths: each keeps its own label.
    const shared = Router({ strict: true });
    shared.get('/:id/', (_req, res) => {
      res.json({ ok: true });
    });
    app.use('/api/one', shared);
    app.use('/api/two', shared);
    app.use((_req, res) => {
      res.status(404).json({});
    });
    app.use((err: { status: number }, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
      res.status(err.status).json({});
    });
    const server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    close = () => new Promise((resolve) => server.close(() => resolve()));
  });
  afterAll(() => close());

  async function series(): Promise<{ route: string; method: string; status: string; count: number }[]> {
    const data = await histogram.get();
    return data.values
      .filter((v) => v.metricName === 't_http_count')
      .map((v) => ({ route: String(v.labels.route), method: String(v.labels.method), status: String(v.labels.status), count: v.value }));
  }

  it('labels by pattern, never by raw path, also for errors passed on by a handler', async () => {
    for (const path of [
      '/api/data_store/data/db1/c1/',
      '/api/data_store/data/db2/c2/',
      '/api/data_store/data/db3/fail/',
      '/no/such/path',
      '/no/other/path',
      '/api/one/1/',
      '/api/two/2/',
      '/api/two/3/',
    ]) {
      await (await fetch(url + path)).arrayBuffer();
    }
    await new Promise((r) => setTimeout(r, 50));
    const got = await series();
    expect(got).toEqual(
      expect.arrayContaining([
        { route: '/api/data_store/data/:db/:col/', method: 'GET', status: '200', count: 2 },
        { route: '/api/data_store/data/:db/fail/', method: 'GET', status: '403', count: 1 },
        { route: UNMATCHED_ROUTE, method: 'GET', status: '404', count: 2 },
        { route: '/api/one/:id/', method: 'GET', status: '200', count: 1 },
        { route: '/api/two/:id/', method: 'GET', status: '200', count: 2 },
      ]),
    );
    expect(got.map((s) => s.route).join(' ')).not.toMatch(/db1|db2|no\/such/);
  });
});
