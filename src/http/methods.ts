/**
 * One route, several methods: dispatches to the handler for the request's method, answers
 * OPTIONS, and turns anything else into 405 with an Allow header. Handlers are async; their
 * rejections go to the error handler (express 4 does not catch them itself).
 */
import type { Request, RequestHandler, Response } from 'express';
import { methodNotAllowed } from '../errors.js';

export type AsyncHandler = (req: Request, res: Response) => Promise<void>;

export function methods(handlers: Record<string, AsyncHandler>): RequestHandler {
  const allow = [...Object.keys(handlers), ...(handlers.GET ? ['HEAD'] : []), 'OPTIONS'];
  return (req, res, next) => {
    res.locals.allow = allow;
    res.setHeader('Allow', allow.join(', '));
    if (req.method === 'OPTIONS') {
      res.status(204).end();
      return;
    }
    const handler = handlers[req.method === 'HEAD' ? 'GET' : req.method];
    if (handler === undefined) return next(methodNotAllowed(req.method));
    handler(req, res).catch(next);
  };
}
