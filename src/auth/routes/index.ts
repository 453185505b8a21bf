/** The auth router (mounted at /api): session login/logout, the profile and the JWT endpoints. */
import { Router } from 'express';
import type { AuthRouteDeps } from './deps.js';
import { jwtRoutes } from './jwt-routes.js';
import { profileRoutes } from './profile-routes.js';
import { sessionRoutes } from './session-routes.js';

export function authRouter(deps: AuthRouteDeps): Router {
  const router = Router();
  router.use(sessionRoutes(deps));
  router.use(profileRoutes(deps));
  router.use(jwtRoutes(deps));
  return router;
}
