/**
 * The browsable page's only script, browser/browsable.ts (type-checked against the DOM, bundled
 * by http/browser-bundle.ts), served by the API itself under /api/static/ so the
 * Content-Security-Policy needs no inline script and nothing comes from the internet. Pages load
 * it by its content-hashed name, cached for good, and compressed (http/static-files.ts).
 */
import type { Router } from 'express';
import { browserScript } from '../http/browser-bundle.js';
import { JAVASCRIPT, StaticFiles } from '../http/static-files.js';
import { MOUNTS } from '../http/urls.js';

export const BROWSABLE_STATIC_ROOT = MOUNTS.static;

const FILES = new StaticFiles(BROWSABLE_STATIC_ROOT, { 'browsable.js': { type: JAVASCRIPT, body: () => browserScript('browsable') } });

/** The path pages load the script from: its content-hashed name. */
export const browsableScriptPath = (): string => FILES.path('browsable.js');

/** GET /api/static/<name>: the script, by its hashed name (immutable) or its plain one (revalidated by ETag). */
export const browsableStatic = (): Router => FILES.router();
