/**
 * The manual, served by the service itself at /api/manual/ so a lab whose network has no internet
 * still has it: the VitePress site of docs/, built for that path by ops/build-manual.sh (run by
 * the installer, the API image's build and the tests) into MANUAL_DIR. Public, like the login
 * page: it documents the service and holds no data.
 *
 * Files are served as they are (ETag and Last-Modified; VitePress's content-hashed assets/ are
 * cached for good), under the manual's own Content-Security-Policy (policy.ts), worked out from
 * the built pages when the site is first served and again whenever it has been rebuilt. Without
 * a built site every path answers 404 `manual_not_built`; a missing page answers 404
 * `no_such_page`. Mounted before the trailing-slash redirect: page URLs end in `.html`.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join, sep } from 'node:path';
import express, { Router, type Response } from 'express';
import { methodNotAllowed, notFound } from '../errors.js';
import { collectInline, manualPolicy, type InlineContent } from './policy.js';
import { MOUNTS } from '../http/urls.js';

export const MANUAL_ROOT = MOUNTS.manual;
/** Written by ops/build-manual.sh last, so its time says when the site was (re)built. */
const STAMP = '.source-digest';
const ALLOW = ['GET', 'HEAD', 'OPTIONS'];

const notBuilt = () =>
  notFound(
    'The manual has not been built on this server. Build it with `bash ops/build-manual.sh` (into MANUAL_DIR, default .cache/manual).',
    'manual_not_built',
  );

/** The policy for the site in `dir`, worked out again when its stamp changes; undefined: not built. */
function sitePolicy(dir: string): () => Promise<string | undefined> {
  let known: { stamp: number; policy: string } | undefined;
  return async () => {
    let stamp: number;
    try {
      stamp = (await stat(join(dir, STAMP))).mtimeMs;
    } catch {
      return undefined;
    }
    if (known?.stamp !== stamp) {
      const inline: InlineContent = { scripts: new Set(), styleAttributes: new Set() };
      const entries = await readdir(dir, { recursive: true, withFileTypes: true });
      for (const entry of entries) {
        if (entry.isFile() && entry.name.endsWith('.html'))
          collectInline(await readFile(join(entry.parentPath, entry.name), 'utf8'), inline);
      }
      known = { stamp, policy: manualPolicy(inline) };
    }
    return known.policy;
  };
}

export function manualRouter(dir: string): Router {
  const router = Router({ strict: true });
  const policy = sitePolicy(dir);
  router.use((req, res, next) => {
    res.locals.allow = ALLOW;
    if (req.method === 'OPTIONS') {
      res.setHeader('Allow', ALLOW.join(', '));
      res.status(204).end();
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', ALLOW.join(', '));
      next(methodNotAllowed(req.method));
      return;
    }
    // The mount strips the path: /api/manual arrives as "/" too, and its pages' relative links need the slash.
    if (req.originalUrl === MANUAL_ROOT || req.originalUrl.startsWith(`${MANUAL_ROOT}?`)) {
      res.redirect(301, `${MANUAL_ROOT}/${req.originalUrl.slice(MANUAL_ROOT.length)}`);
      return;
    }
    policy().then((text) => {
      if (text === undefined) return next(notBuilt());
      res.locals.manualPolicy = text;
      next();
    }, next);
  });
  router.use(
    express.static(dir, {
      index: 'index.html',
      redirect: false,
      dotfiles: 'ignore',
      fallthrough: true,
      setHeaders: (res: Response, path: string) => {
        res.setHeader('Content-Security-Policy', String(res.locals.manualPolicy));
        // VitePress names assets by their content: a new build gives new names.
        const hashed = path.startsWith(join(dir, 'assets') + sep);
        res.setHeader('Cache-Control', hashed ? 'public, max-age=31536000, immutable' : 'no-cache');
      },
    }),
  );
  router.use((req, _res, next) => next(notFound(`The manual has no page ${MANUAL_ROOT}${req.path}.`, 'no_such_page')));
  return router;
}
