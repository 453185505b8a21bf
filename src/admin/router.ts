/**
 * The express routes of the admin site, made from AdminJS's own route table (the same table
 * @adminjs/express's buildRouter uses), with four differences that are the point of this module:
 * - the current admin comes from the request's principal (our session login, or the API's word
 *   for it in the admin process), not from a session key of AdminJS's own login;
 * - pages are passed through hardenLayout and sent with the site's Content-Security-Policy
 *   (scripts by nonce only; inline styles allowed, which AdminJS's React components need);
 * - the shipped frontend bundles are always the production builds (about 3 MB instead of
 *   25 MB), whatever NODE_ENV is, and the components bundle is the one bundle.ts built;
 * - form bodies are parsed only on POST routes, with small limits and no file uploads.
 */
import { existsSync } from 'node:fs';
import express, { type Request, type RequestHandler, type Response, type Router } from 'express';
import formidable from 'express-formidable';
import type AdminJS from 'adminjs';
import { Router as AdminRoutes } from 'adminjs';
import { contentSecurityPolicy } from '../http/security-headers.js';
import type { ServiceAdmin } from './current-admin.js';
import { withoutPrototypeKeys } from './form-fields.js';
import { hardenLayout } from './layout.js';

const COMPONENTS_BUNDLE_PATH = '/frontend/assets/components.bundle.js';
/** Admin forms are small: a user, a group and its permission list, a picker choice. */
const MAX_FORM_BYTES = 1024 * 1024;

export interface AdminRouterOptions {
  title: string;
  /** The administrator a request stands for: its principal in the API, a forwarded header in the admin process. */
  currentAdmin: (req: Request) => ServiceAdmin;
  /** The components bundle's file (bundle.ts). */
  componentsBundle: string;
}

type AdminRoute = (typeof AdminRoutes.routes)[number];
type Controller = Record<string, (request: unknown, response: Response) => Promise<unknown>>;

/** AdminJS writes `{resourceId}`; express wants `:resourceId`. The root route is ''. */
function expressPath(path: string): string {
  const converted = path.replace(/\{(\w+)\}/g, ':$1');
  return converted === '' ? '/' : converted;
}

/** The `.production.js` variant of a development bundle, when the package ships it. */
function productionAsset(src: string): string {
  const production = src.replace(/\.development\.js$/, '.production.js');
  return production !== src && existsSync(production) ? production : src;
}

function sendFile(file: string): RequestHandler {
  return (_req, res, next) => {
    // Revalidated on every load (ETag/Last-Modified): an upgrade is picked up at once.
    res.sendFile(file, { headers: { 'Cache-Control': 'no-cache' } }, (err) => {
      if (err !== undefined && !res.headersSent) next(err);
    });
  };
}

function routeHandler(admin: AdminJS, route: AdminRoute, options: AdminRouterOptions): RequestHandler {
  return (req: Request, res: Response, next) => {
    const controller = new route.Controller({ admin }, options.currentAdmin(req)) as unknown as Controller;
    const fields = (req as Request & { fields?: Record<string, unknown> }).fields ?? {};
    const request = {
      params: req.params,
      query: withoutPrototypeKeys(req.query),
      payload: withoutPrototypeKeys(fields),
      method: req.method.toLowerCase(),
    };
    const action = controller[route.action];
    if (action === undefined) {
      next(new Error(`AdminJS route ${route.path} names an unknown action ${route.action}`));
      return;
    }
    action
      .call(controller, request, res)
      .then((result) => {
        if (res.headersSent) return;
        res.setHeader('Cache-Control', 'no-store');
        if (typeof result === 'string') {
          const nonce = res.locals.cspNonce as string;
          res.setHeader('Content-Security-Policy', contentSecurityPolicy(nonce, { inlineStyles: true }));
          res.type('html').send(hardenLayout(result, { nonce, title: options.title }));
          return;
        }
        res.json(result ?? {});
      })
      .catch(next);
  };
}

export function adminRouter(admin: AdminJS, options: AdminRouterOptions): Router {
  const router = express.Router();
  // With NODE_ENV=production AdminJS lists components.bundle.js as an asset in its own temp
  // directory; ours is the one bundle.ts built.
  router.get(COMPONENTS_BUNDLE_PATH, sendFile(options.componentsBundle));
  for (const asset of AdminRoutes.assets) {
    if (asset.path !== COMPONENTS_BUNDLE_PATH) router.get(asset.path, sendFile(productionAsset(asset.src)));
  }

  const parseForm = formidable({ maxFieldsSize: MAX_FORM_BYTES, maxFileSize: 1, maxFields: 1000, multiples: false });
  for (const route of AdminRoutes.routes) {
    // Served above from the prebuilt file instead of being bundled on request.
    if (route.action === 'bundleComponents') continue;
    const path = expressPath(route.path);
    if (route.method === 'GET') router.get(path, routeHandler(admin, route, options));
    else router.post(path, parseForm, routeHandler(admin, route, options));
  }
  return router;
}
