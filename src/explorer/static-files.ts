/**
 * The explorer's browser files, served by the service itself (no CDN) and loaded only by the
 * chart view: uPlot's prebuilt browser build and stylesheet, from the installed `uplot` package,
 * and the chart script (chart-script.ts). Revalidated by ETag, so a new version is picked up at once.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Router, type Request, type Response } from 'express';
import { CHART_SCRIPT } from './chart-script.js';

export const EXPLORE_STATIC_ROOT = '/api/explore/static';

interface StaticFile {
  type: string;
  body: () => string;
}

/** uPlot's dist/ directory (the package's main file lives there). */
function uplotDist(): string {
  return dirname(createRequire(import.meta.url).resolve('uplot'));
}

const FILES: Record<string, StaticFile> = {
  'uplot.js': { type: 'application/javascript; charset=utf-8', body: () => readFileSync(join(uplotDist(), 'uPlot.iife.min.js'), 'utf8') },
  'uplot.css': { type: 'text/css; charset=utf-8', body: () => readFileSync(join(uplotDist(), 'uPlot.min.css'), 'utf8') },
  'chart.js': { type: 'application/javascript; charset=utf-8', body: () => CHART_SCRIPT },
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
