/**
 * JSON request bodies: size-limited, JSON content type only (415 otherwise), malformed JSON is a
 * 400 with a clear message. Parsed bodies are left as plain JSON; Extended JSON is decoded by the
 * routes that accept documents.
 */
import express, { type RequestHandler } from 'express';
import { ApiError, badRequest, payloadTooLarge, unsupportedMediaType } from '../errors.js';

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

function hasBody(req: Parameters<RequestHandler>[0]): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

export interface BodyOptions {
  maxBytes: number;
  /** Also accept HTML form posts (the login page). */
  allowForm?: boolean;
}

export function jsonBody(options: BodyOptions): RequestHandler[] {
  const json = express.json({ limit: options.maxBytes, strict: false, type: () => true });
  const form = express.urlencoded({ limit: options.maxBytes, extended: false, type: () => true });
  const guard: RequestHandler = (req, _res, next) => {
    // Already parsed by a more specific parser mounted earlier (the login form).
    if ((req as { _body?: boolean })._body === true) return next();
    if (!BODY_METHODS.has(req.method) || !hasBody(req)) {
      req.body = undefined;
      return next();
    }
    const type = (req.headers['content-type'] ?? '').toLowerCase();
    if (/^application\/(.+\+)?json\b/.test(type)) return json(req, _res, (err?: unknown) => next(translate(err, options.maxBytes)));
    if (options.allowForm === true && type.startsWith('application/x-www-form-urlencoded')) {
      return form(req, _res, (err?: unknown) => next(translate(err, options.maxBytes)));
    }
    next(unsupportedMediaType());
  };
  return [guard];
}

function translate(err: unknown, maxBytes: number): unknown {
  if (err === undefined || err === null) return undefined;
  const e = err as { type?: string; message?: string };
  if (e.type === 'entity.too.large') return payloadTooLarge(`Request body is larger than the limit of ${maxBytes} bytes.`);
  if (e.type === 'entity.parse.failed')
    return badRequest('malformed_json', `Request body is not valid JSON: ${e.message ?? 'parse error'}`);
  if (e.type === 'encoding.unsupported' || e.type === 'charset.unsupported')
    return new ApiError(415, 'unsupported_media_type', e.message ?? 'Unsupported encoding.');
  if (e.type === 'request.aborted' || e.type === 'stream.not.readable')
    return badRequest('request_aborted', 'The request body was not received completely.');
  // A Content-Encoding (gzip, deflate) whose data does not decompress.
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && code.startsWith('Z_'))
    return badRequest('invalid_body', 'The request body is not valid data for its Content-Encoding.');
  return err;
}
