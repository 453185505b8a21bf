/**
 * One route, several methods: dispatches to the handler for the request's method, answers
 * OPTIONS, and turns anything else into 405 with an Allow header. Handlers are async; their
 * rejections go to the error handler (express 4 does not catch them itself).
 */
import type { Request, RequestHandler, Response } from 'express';
import { methodNotAllowed } from '../errors.js';

export type AsyncHandler = (req: Request, res: Response) => Promise<void>;

/** The handler `methods` returns names the methods it serves, so what is mounted can be listed (the route table's test). */
type MethodsHandler = RequestHandler & { readonly methods: readonly string[] };

export function methods(handlers: Record<string, AsyncHandler>): MethodsHandler {
  const allow = [...Object.keys(handlers), ...(handlers.GET ? ['HEAD'] : []), 'OPTIONS'];
  const allowHeader = allow.join(', ');
  const handler: RequestHandler = (req, res, next) => {
    res.locals.allow = allow;
    res.setHeader('Allow', allowHeader);
    if (req.method === 'OPTIONS') {
      res.status(204).end();
      return;
    }
    const handle = handlers[req.method === 'HEAD' ? 'GET' : req.method];
    if (handle === undefined) return next(methodNotAllowed(req.method));
    handle(req, res).catch(next);
  };
  return Object.assign(handler, { methods: Object.freeze(Object.keys(handlers)) });
}
