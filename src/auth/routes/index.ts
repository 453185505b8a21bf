/**
 * The auth router (mounted at /api): session login/logout, the profile and the JWT endpoints.
 *
 * One router holds all their routes. Mounted at /api, it is entered by every request under /api
 * and left by those it does not serve, and express leaves a router through a setImmediate: three
 * routers nested in it cost every data request three more of those turns of the event loop.
 */
import { Router } from 'express';
import type { AuthRouteDeps } from './deps.js';
import { jwtRoutes } from './jwt-routes.js';
import { profileRoutes } from './profile-routes.js';
import { sessionRoutes } from './session-routes.js';

export function authRouter(deps: AuthRouteDeps): Router {
  const router = Router();
  sessionRoutes(deps, router);
  profileRoutes(deps, router);
  jwtRoutes(deps, router);
  return router;
}
