/** Small pieces the auth routes share: async handlers and 405 answers that list what is allowed. */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { ApiError } from '../../errors.js';

/** Express 4 does not see rejected promises: hand them to the error handler. */
export function asyncRoute(handler: (req: Request, res: Response, next: NextFunction) => Promise<void>): RequestHandler {
  return (req, res, next) => {
    handler(req, res, next).catch(next);
  };
}

/** The last handler of a route: any other method is a 405 with an Allow header. */
export function onlyMethods(...methods: string[]): RequestHandler {
  const allow = [...methods, ...(methods.includes('GET') ? ['HEAD'] : []), 'OPTIONS'];
  return (req, res, next) => {
    if (req.method === 'OPTIONS') {
      res.setHeader('Allow', allow.join(', '));
      res.status(204).end();
      return;
    }
    next(new ApiError(405, 'method_not_allowed', `Method "${req.method}" is not allowed here.`, undefined, { Allow: allow.join(', ') }));
  };
}

/** The client's address as express sees it (X-Forwarded-For only when TRUST_PROXY is on). */
export function clientAddress(req: Request): string {
  return req.ip ?? req.socket.remoteAddress ?? 'unknown';
}

/** True for an HTML form post (the login and logout pages), false for JSON and empty bodies. */
export function isFormPost(req: Request): boolean {
  return req.is('application/x-www-form-urlencoded') === 'application/x-www-form-urlencoded';
}
