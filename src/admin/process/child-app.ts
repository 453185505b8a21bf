/**
 * The express application of the admin process: AdminJS's routes behind one check, that the
 * request carries the administrator the API forwarded it for. Nothing else reaches this process
 * (its socket is in a directory only the API's user may enter), and everything the API checks
 * before AdminJS it has checked already (admin-process.ts).
 */
import express, { type ErrorRequestHandler, type Express, type Request, type RequestHandler, type Router } from 'express';
import { ApiError } from '../../errors.js';
import { ADMIN_ROOT } from '../access.js';
import type { ServiceAdmin } from '../current-admin.js';
import { ADMIN_HEADER, NONCE_HEADER, decodeAdmin } from './admin-process.js';

const forwarded = new WeakMap<Request, ServiceAdmin>();

/** The administrator the API forwarded a request for (for createAdminRouter's `currentAdmin`). */
export function forwardedAdmin(req: Request): ServiceAdmin {
  const admin = forwarded.get(req);
  if (admin === undefined) throw new Error('an admin request reached AdminJS without the administrator it stands for');
  return admin;
}

/** The API's own answers for what AdminJS does not serve and for errors, so that both processes answer alike. */
export interface AdminProcessAnswers {
  notFound: RequestHandler;
  errors: ErrorRequestHandler;
}

export function adminProcessApp(adminjs: Router, answers: AdminProcessAnswers): Express {
  const app = express();
  app.disable('x-powered-by');
  // As in the API: query strings are read flat, the way AdminJS's filters name their fields.
  app.set('query parser', 'simple');
  app.use((req, res, next) => {
    const admin = decodeAdmin(req.get(ADMIN_HEADER));
    if (admin === undefined) {
      next(new ApiError(403, 'permission_denied', 'This request did not come through the API.'));
      return;
    }
    forwarded.set(req, admin);
    res.locals.cspNonce = req.get(NONCE_HEADER) ?? '';
    next();
  });
  app.use(ADMIN_ROOT, adminjs);
  app.use(answers.notFound);
  app.use(answers.errors);
  return app;
}
