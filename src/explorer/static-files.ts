/**
 * The explorer's browser files, served by the service itself (no CDN), each loaded only by the
 * view that uses it: for the chart view, uPlot's prebuilt browser build and stylesheet (the
 * installed `uplot` package) and the chart script; for the map view, Leaflet's and
 * Leaflet.markercluster's prebuilt builds and stylesheets (the installed `leaflet` and
 * `leaflet.markercluster` packages) and the map script; for histograms, their brush. The
 * explorer's own scripts are the bundles of browser/*.ts (browser-bundle.ts). Pages load each under a name holding a hash of its content
 * (`map.<hash>.js`), cached for good (`immutable`): a new version has a new name, so it is picked
 * up at once and an unchanged one is never asked for again. The plain names are still served,
 * revalidated by ETag. Each file is sent compressed (Brotli or gzip, at their best ratio,
 * compressed once per process) to clients that take it.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { Router, type Request, type Response } from 'express';
import { negotiateEncoding, type Encoding } from '../http/compression.js';
import { MOUNTS } from '../http/urls.js';
import { browserScript } from './browser-bundle.js';

export const EXPLORE_STATIC_ROOT = MOUNTS.exploreStatic;

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

const FILES = {
  'uplot.js': { type: JS, body: () => readFileSync(join(DIST.uplot(), 'uPlot.iife.min.js'), 'utf8') },
  'uplot.css': { type: CSS, body: () => readFileSync(join(DIST.uplot(), 'uPlot.min.css'), 'utf8') },
  'chart.js': { type: JS, body: () => browserScript('chart') },
  'histogram.js': { type: JS, body: () => browserScript('histogram') },
  'leaflet.js': { type: JS, body: () => readFileSync(join(DIST.leaflet(), 'leaflet.js'), 'utf8') },
  'leaflet.css': { type: CSS, body: () => readFileSync(join(DIST.leaflet(), 'leaflet.css'), 'utf8') },
  'markercluster.js': { type: JS, body: () => readFileSync(join(DIST.markercluster(), 'leaflet.markercluster.js'), 'utf8') },
  'markercluster.css': {
    type: CSS,
    body: () =>
      ['MarkerCluster.css', 'MarkerCluster.Default.css'].map((name) => readFileSync(join(DIST.markercluster(), name), 'utf8')).join('\n'),
  },
  'map.js': { type: JS, body: () => browserScript('map') },
} satisfies Record<string, StaticFile>;

export type StaticName = keyof typeof FILES & string;

/** The names of the files served, each also under its content-hashed name (see staticPath). */
export const STATIC_NAMES = Object.keys(FILES) as StaticName[];

/** A file read once: its bytes, their hash, and its compressed forms (made once, at the best ratio). */
interface LoadedFile {
  type: string;
  body: Buffer;
  /** 12 characters of the body's SHA-256, in the file's hashed name. */
  hash: string;
  etag: string;
  encoded: Partial<Record<Encoding, Buffer>>;
}

const loaded = new Map<string, LoadedFile>();

function load(name: StaticName): LoadedFile {
  let file = loaded.get(name);
  if (file === undefined) {
    const body = Buffer.from(FILES[name].body(), 'utf8');
    const digest = createHash('sha256').update(body).digest('base64url');
    file = { type: FILES[name].type, body, hash: digest.slice(0, 12).replace(/[-_]/g, '0'), etag: `"${digest.slice(0, 27)}"`, encoded: {} };
    loaded.set(name, file);
  }
  return file;
}

/** The file's bytes in an encoding, compressed on first use at the highest setting (once per process). */
function encodedBody(file: LoadedFile, encoding: Encoding): Buffer {
  let body = file.encoded[encoding];
  if (body === undefined) {
    body =
      encoding === 'br'
        ? brotliCompressSync(file.body, {
            params: {
              [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY,
              [constants.BROTLI_PARAM_SIZE_HINT]: file.body.length,
            },
          })
        : gzipSync(file.body, { level: constants.Z_BEST_COMPRESSION });
    file.encoded[encoding] = body;
  }
  return body;
}

/** `name.<hash>.ext`: the name pages load a file by, new whenever its content changes. */
function hashedName(name: StaticName): string {
  const dot = name.lastIndexOf('.');
  return `${name.slice(0, dot)}.${load(name).hash}${name.slice(dot)}`;
}

/** The path pages load a file from: its content-hashed name, cached by browsers for good. */
export const staticPath = (name: StaticName): string => `${EXPLORE_STATIC_ROOT}/${hashedName(name)}`;

/** A year: what `immutable` caches keep a hashed file for (its content never changes under that name). */
const IMMUTABLE = 'public, max-age=31536000, immutable';

/** The file a request names: by its hashed name (current content only) or, revalidated each time, by its plain name. */
function requested(name: string): { file: LoadedFile; hashed: boolean } | undefined {
  if (Object.hasOwn(FILES, name)) return { file: load(name as StaticName), hashed: false };
  const match = /^(.+)\.([A-Za-z0-9]{12})(\.[a-z]+)$/.exec(name);
  if (match === null) return undefined;
  const plain = `${match[1]}${match[3]}`;
  if (!Object.hasOwn(FILES, plain)) return undefined;
  const file = load(plain as StaticName);
  return file.hash === match[2] ? { file, hashed: true } : undefined;
}

export function explorerStatic(): Router {
  const router = Router({ strict: true });
  router.get('/:name', (req: Request, res: Response, next) => {
    const found = requested(String(req.params.name));
    if (found === undefined) return next();
    const { file, hashed } = found;
    res.setHeader('Content-Type', file.type);
    res.setHeader('Cache-Control', hashed ? IMMUTABLE : 'no-cache');
    res.setHeader('Vary', 'Accept-Encoding');
    res.setHeader('ETag', file.etag);
    if (req.headers['if-none-match'] === file.etag) {
      res.status(304).end();
      return;
    }
    const encoding = negotiateEncoding(req.headers['accept-encoding']);
    if (encoding === undefined) {
      res.status(200).end(file.body);
      return;
    }
    const body = encodedBody(file, encoding);
    res.setHeader('Content-Encoding', encoding);
    res.setHeader('Content-Length', body.length);
    res.status(200).end(body);
  });
  return router;
}
