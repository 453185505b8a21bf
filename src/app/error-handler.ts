/**
 * The single mapping from errors to responses. Known ApiErrors keep their status; the documents
 * layer's errors get theirs by kind (missing 404, conflict 409, refused 400); driver errors
 * are classified (duplicate key → 409, unreachable database → 503, bad user query → 400);
 * everything else is a 500 whose internals appear only when DEBUG is on.
 */
import type { ErrorRequestHandler, RequestHandler } from 'express';
import { ApiError, badRequest, notFound } from '../errors.js';
import type { Logger } from '../log/logger.js';
import { classifyDatabaseError, STORAGE_FULL_CODE, type DatabaseError, type DatabaseErrorKind } from '../db/errors.js';
import { QueueUnavailableError } from '../queue/errors.js';
import { DocumentError, type DocumentErrorKind } from '../documents/errors.js';
import { isRecordFormat, ResponseClosedError } from '../render/index.js';
import { respond } from '../http/respond.js';

export function notFoundHandler(): RequestHandler {
  return (req, _res, next) => next(notFound(`No endpoint at ${req.path}.`, 'no_such_endpoint'));
}

/**
 * Errors that express and its body parsers raise for a request they cannot read (a path segment
 * that is not valid percent-encoded UTF-8, an unreadable body) carry a 4xx `status`: the caller's
 * fault, so a 400-class answer, never a 500.
 */
function httpClientError(err: unknown): ApiError | undefined {
  const status = (err as { status?: unknown; statusCode?: unknown } | null)?.status ?? (err as { statusCode?: unknown } | null)?.statusCode;
  if (typeof status !== 'number' || status < 400 || status > 499) return undefined;
  if (err instanceof URIError) return badRequest('invalid_path', 'The URL path is not valid percent-encoded UTF-8.');
  return new ApiError(status, 'bad_request', 'The request could not be read.');
}

/**
 * Database failures by kind: the caller's fault only when the query or the record is wrong; an
 * unreachable, overloaded or full database is worth retrying later (503).
 */
const DATABASE_ERROR_STATUS: Record<DatabaseErrorKind, number> = {
  unavailable: 503,
  query_timeout: 503,
  storage_full: 503,
  duplicate_key: 409,
  invalid_query: 400,
  record_refused: 400,
};

/** What is missing is not found; what is in the way is a conflict; a refusal is the caller's to change. */
const DOCUMENT_ERROR_STATUS: Record<DocumentErrorKind, number> = { missing: 404, conflict: 409, refused: 400 };

export function documentApiError(err: DocumentError): ApiError {
  return new ApiError(DOCUMENT_ERROR_STATUS[err.kind], err.code, err.message, err.detail);
}

export function databaseApiError(err: DatabaseError): ApiError {
  return new ApiError(DATABASE_ERROR_STATUS[err.kind], err.code, err.message, err.detail);
}

/** Told of every write the database refused for lack of space, so health can say so. */
export interface StorageObserver {
  markFull(): void;
}

export function errorHandler(logger: Logger, debug: boolean, storage?: StorageObserver): ErrorRequestHandler {
  return (err: unknown, req, res, _next) => {
    if (err instanceof ResponseClosedError) {
      // A stream whose client went away or stopped reading (the send timeout): there is no one
      // to answer, and nothing failed on this side.
      logger.info({ reqId: req.requestId, reason: err.message }, 'streamed response ended early');
      res.destroy();
      return;
    }
    let apiError: ApiError;
    const clientError = httpClientError(err);
    if (err instanceof ApiError) {
      apiError = err;
    } else if (err instanceof DocumentError) {
      apiError = documentApiError(err);
    } else if (err instanceof QueueUnavailableError) {
      // Retrying later helps: the broker reconnects by itself, workers re-declare their queues.
      apiError = new ApiError(503, err.code, err.message, err.detail);
    } else if (clientError !== undefined) {
      apiError = clientError;
    } else {
      const classified = classifyDatabaseError(err);
      if (classified) {
        apiError = databaseApiError(classified);
        if (apiError.status >= 500) logger.warn({ reqId: req.requestId, err }, 'database unavailable');
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
    if (apiError.code === STORAGE_FULL_CODE) storage?.markFull();
    if (res.headersSent) {
      // A streamed response failed half-way: the client must not mistake it for a full answer.
      res.destroy();
      return;
    }
    for (const [k, v] of Object.entries(apiError.headers)) res.setHeader(k, v);
    // CSV and NDJSON carry records; an error is not one, so it goes out in JSON.
    if (req.format === undefined || isRecordFormat(req.format)) req.format = 'json';
    try {
      respond(req, res, apiError.status, apiError.toBody());
    } catch {
      req.format = 'json';
      respond(req, res, apiError.status, apiError.toBody());
    }
  };
}
