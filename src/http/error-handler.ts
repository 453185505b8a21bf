/**
 * The single mapping from errors to responses. Known ApiErrors keep their status; driver errors
 * are classified (duplicate key → 409, unreachable database → 503, bad user query → 400);
 * everything else is a 500 whose internals appear only when DEBUG is on.
 */
import type { ErrorRequestHandler, RequestHandler } from 'express';
import { ApiError, notFound } from '../errors.js';
import type { Logger } from '../log/logger.js';
import { classifyDatabaseError } from '../db/errors.js';
import { respond } from './respond.js';

export function notFoundHandler(): RequestHandler {
  return (req, _res, next) => next(notFound(`No endpoint at ${req.path}.`, 'no_such_endpoint'));
}

export function errorHandler(logger: Logger, debug: boolean): ErrorRequestHandler {
  return (err: unknown, req, res, _next) => {
    let apiError: ApiError;
    if (err instanceof ApiError) {
      apiError = err;
    } else {
      const classified = classifyDatabaseError(err);
      if (classified) {
        apiError = classified;
        if (classified.status >= 500) logger.warn({ reqId: req.requestId, err }, 'database unavailable');
      } else {
        logger.error({ reqId: req.requestId, err }, 'unhandled error');
        const e = err as Error;
        apiError = new ApiError(
          500,
          'server_error',
          'The server hit an unexpected error. It has been logged.',
          debug ? { name: e?.name, message: e?.message, stack: e?.stack?.split('\n') } : undefined,
        );
      }
    }
    if (res.headersSent) {
      // A streamed response failed half-way: the client must not mistake it for a full answer.
      res.destroy();
      return;
    }
    for (const [k, v] of Object.entries(apiError.headers)) res.setHeader(k, v);
    if (req.format === undefined) req.format = 'json';
    try {
      respond(req, res, apiError.status, apiError.toBody());
    } catch {
      req.format = 'json';
      respond(req, res, apiError.status, apiError.toBody());
    }
  };
}
