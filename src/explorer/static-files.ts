/**
 * The explorer's browser files, served by the service itself (no CDN), each loaded only by the
 * view that uses it: for the chart view, uPlot's prebuilt browser build and stylesheet (the
 * installed `uplot` package) and the chart script (chart-script.ts); for the map view, Leaflet's
 * and Leaflet.markercluster's prebuilt builds and stylesheets (the installed `leaflet` and
 * `leaflet.markercluster` packages) and the map script (map-script.ts); for histograms, their
 * brush (histogram-script.ts). Revalidated by ETag, so a
 * new version is picked up at once.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Router, type Request, type Response } from 'express';
import { CHART_SCRIPT } from './chart-script.js';
import { HISTOGRAM_SCRIPT } from './histogram-script.js';
import { MAP_SCRIPT } from './map-script.js';

export const EXPLORE_STATIC_ROOT = '/api/explore/static';

interface StaticFile {
  type: string;
  body: () => string;
}

const requireHere = createRequire(import.meta.url);
/**
 * Each package's dist/ directory (where its main file lives). Leaflet and its cluster plugin are
 * only read as files here, never imported, so knip.json lists them as used dependencies.
 */
const DIST = {
  uplot: () => dirname(requireHere.resolve('uplot')),
  leaflet: () => dirname(requireHere.resolve('leaflet')),
  markercluster: () => dirname(requireHere.resolve('leaflet.markercluster')),
};

const JS = 'application/javascript; charset=utf-8';
const CSS = 'text/css; charset=utf-8';

const FILES: Record<string, StaticFile> = {
  'uplot.js': { type: JS, body: () => readFileSync(join(DIST.uplot(), 'uPlot.iife.min.js'), 'utf8') },
  'uplot.css': { type: CSS, body: () => readFileSync(join(DIST.uplot(), 'uPlot.min.css'), 'utf8') },
  'chart.js': { type: JS, body: () => CHART_SCRIPT },
  'histogram.js': { type: JS, body: () => HISTOGRAM_SCRIPT },
  'leaflet.js': { type: JS, body: () => readFileSync(join(DIST.leaflet(), 'leaflet.js'), 'utf8') },
  'leaflet.css': { type: CSS, body: () => readFileSync(join(DIST.leaflet(), 'leaflet.css'), 'utf8') },
  'markercluster.js': { type: JS, body: () => readFileSync(join(DIST.markercluster(), 'leaflet.markercluster.js'), 'utf8') },
  'markercluster.css': {
    type: CSS,
    body: () =>
      ['MarkerCluster.css', 'MarkerCluster.Default.css'].map((name) => readFileSync(join(DIST.markercluster(), name), 'utf8')).join('\n'),
  },
  'map.js': { type: JS, body: () => MAP_SCRIPT },
};

export const staticPath = (name: keyof typeof FILES & string): string => `${EXPLORE_STATIC_ROOT}/${name}`;

export function explorerStatic(): Router {
  const router = Router({ strict: true });
  const loaded = new Map<string, { body: string; etag: string }>();
  router.get('/:name', (req: Request, res: Response, next) => {
    const name = String(req.params.name);
    const file = Object.hasOwn(FILES, name) ? FILES[name] : undefined;
    if (file === undefined) return next();
    let entry = loaded.get(name);
    if (entry === undefined) {
      const body = file.body();
      entry = { body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
      loaded.set(name, entry);
    }
    res.setHeader('Content-Type', file.type);
    res.setHeader('Cache-Control', 'no-cache');
    res.setHeader('ETag', entry.etag);
    if (req.headers['if-none-match'] === entry.etag) {
      res.status(304).end();
      return;
    }
    res.status(200).send(entry.body);
  });
  return router;
}
