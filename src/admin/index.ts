/**
 * The administration site at /api/admin (AdminJS on @adminjs/mongoose's models of the auth
 * module), mounted by src/app/app.ts.
 *
 * Cheap to mount: AdminJS is imported and set up on the first request that passes the access
 * check (or at once with `eager`), once per process, so test apps and API-only processes pay
 * nothing for it. The request path, in order:
 *   session + authentication (the API's own) → AdminJS's login/logout URLs redirect to the API's
 *   pages → access gate (staff and superusers with a browser session) → Django-style paths →
 *   CSRF check of the admin's own requests → AdminJS.
 */
import { Router, type RequestHandler } from 'express';
import type { AdminContext } from './context.js';
import { ADMIN_ROOT, LOGOUT_PATH, adminAccessGate, loginRedirect } from './access.js';
import { adminCsrf } from './admin-csrf.js';
import { defaultBundleDir } from './bundle.js';
import { operationsRouter } from './operations/routes.js';
import { indexesAdminRouter } from './indexes/routes.js';
import type { AdminProcess } from './process/admin-process.js';

export { ADMIN_ROOT } from './access.js';

export interface AdminSiteOptions {
  /**
   * Registered task names for the permission picker, e.g. from the queue's task catalog.
   * Without it the picker still grants tasks whose names are typed in.
   */
  taskNames?: () => Promise<string[]>;
  /** Where the components bundle is built or found (default: ADMIN_BUNDLE_DIR, else .cache/adminjs). */
  bundleDir?: string;
  /** Set the site up right away (in the background) instead of on its first request. */
  eager?: boolean;
  /**
   * Make AdminJS's pages in a process of its own (process/admin-process.ts) instead of loading
   * AdminJS into this one. Everything before AdminJS (session, access, CSRF, the Operations and
   * Indexes JSON) stays here either way.
   */
  separate?: AdminProcess;
}

/** The URLs of Django's admin, which people and old links know: they land on the same lists. */
const DJANGO_PATHS: Record<string, string> = {
  '/auth/user': 'User',
  '/auth/group': 'Group',
  '/auth/permission': 'Permission',
  '/authtoken/token': 'Token',
};

function djangoPaths(): RequestHandler {
  return (req, res, next) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return next();
    const resource = DJANGO_PATHS[req.path.replace(/\/$/, '')];
    if (resource === undefined) return next();
    res.redirect(302, `${ADMIN_ROOT}/resources/${resource}`);
  };
}

export function adminSite(ctx: AdminContext, options: AdminSiteOptions = {}): Router {
  const bundleDir = options.bundleDir ?? defaultBundleDir();
  let site: Promise<Router> | undefined;
  const load = (): Promise<Router> => {
    site ??= (async () => {
      const started = Date.now();
      // AdminJS reads its working directory from the environment when first imported.
      process.env.ADMIN_JS_TMP_DIR ??= bundleDir;
      const { createAdminRouter } = await import('./site.js');
      const router = await createAdminRouter(ctx, { bundleDir, taskNames: options.taskNames });
      ctx.logger.info({ ms: Date.now() - started }, 'admin site ready');
      return router;
    })().catch((err: unknown) => {
      site = undefined; // the next request tries again
      throw err;
    });
    return site;
  };
  if (options.eager === true && options.separate === undefined)
    load().catch((err: unknown) => ctx.logger.error({ err }, 'admin site failed to start'));

  const router = Router();
  router.use(ctx.auth.session, ctx.auth.authenticate);
  // AdminJS's own login and logout pages are replaced by the API's.
  router.all('/login', (_req, res) => res.redirect(302, loginRedirect(ADMIN_ROOT)));
  router.all('/logout', (_req, res) => res.redirect(302, LOGOUT_PATH));
  router.use(adminAccessGate(ctx.settings.applicationTitle));
  router.use(djangoPaths());
  router.use(adminCsrf(ADMIN_ROOT));
  // The Operations page's own JSON endpoints, which need nothing of AdminJS.
  router.use('/operations', operationsRouter(ctx));
  // The Indexes page's endpoints: a collection's indexes through the documents' own service.
  router.use('/indexes', indexesAdminRouter(ctx.documents));
  if (options.separate !== undefined) {
    router.use(options.separate.handler());
  } else {
    router.use((req, res, next) => {
      load().then((admin) => admin(req, res, next), next);
    });
  }
  return router;
}
