/**
 * The explorer's browser files, served by the service itself (no CDN), each loaded only by the
 * view that uses it: for the chart view, uPlot's prebuilt browser build and stylesheet (the
 * installed `uplot` package) and the chart script; for the map view, Leaflet's and
 * Leaflet.markercluster's prebuilt builds and stylesheets (the installed `leaflet` and
 * `leaflet.markercluster` packages) and the map script; for histograms, their brush. The
 * explorer's own scripts are the bundles of browser/*.ts (http/browser-bundle.ts). Pages load
 * each under its content-hashed name, cached for good, and compressed (http/static-files.ts).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Router } from 'express';
import { browserScript } from '../http/browser-bundle.js';
import { JAVASCRIPT as JS, STYLESHEET as CSS, StaticFiles } from '../http/static-files.js';
import { MOUNTS } from '../http/urls.js';

export const EXPLORE_STATIC_ROOT = MOUNTS.exploreStatic;

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

const FILES = new StaticFiles(EXPLORE_STATIC_ROOT, {
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
});

/** The names of the files served, each also under its content-hashed name (see staticPath). */
export const STATIC_NAMES = FILES.names;
export type StaticName = (typeof STATIC_NAMES)[number];

/** The path pages load a file from: its content-hashed name, cached by browsers for good. */
export const staticPath = (name: StaticName): string => FILES.path(name);

export const explorerStatic = (): Router => FILES.router();
