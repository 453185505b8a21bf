/**
 * JSON request bodies: size-limited, JSON content type only (415 otherwise), malformed JSON is a
 * 400 with a clear message. Parsed bodies are left as plain JSON; Extended JSON is decoded by the
 * routes that accept documents. Those routes may parse the text themselves (`parse`): JSON.parse
 * forgets how a number was written, and a record keeps `3.0` a double only if that is known.
 */
import express, { type Application, type Request, type RequestHandler } from 'express';
import { ApiError, badRequest, payloadTooLarge, unsupportedMediaType } from '../errors.js';

/** The methods whose bodies are read. */
export const BODY_METHODS: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Whether the request announces a body (a length above zero, or chunks). */
export function hasBody(req: Parameters<RequestHandler>[0]): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

export interface BodyOptions {
  maxBytes: number;
  /** Also accept HTML form posts (the login page). */
  allowForm?: boolean;
  /**
   * Turns the body's text into its value in place of JSON.parse (which it must otherwise match:
   * same values, a SyntaxError for text that is not JSON). An ApiError it throws is the answer.
   */
  parse?: (text: string) => unknown;
}

/** JSON is UTF-8, -16 or -32 (RFC 7159, section 8.1); express.json refuses any other charset the same way. */
function unsupportedCharset(contentType: string): ApiError | undefined {
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(contentType)?.[1]?.toLowerCase();
  if (charset === undefined || charset.startsWith('utf-')) return undefined;
  return new ApiError(415, 'unsupported_media_type', `unsupported charset "${charset.toUpperCase()}"`);
}

/** The length of the text of each request body read by a route's own parser (textJsonParser). */
const textLengths = new WeakMap<Request, number>();

/**
 * The length (in characters) of the JSON text the request's body was parsed from, when a parser
 * of the route's own read it: for handlers that size their work by it (an array insert's commands).
 */
export function bodyTextLength(req: Request): number | undefined {
  return textLengths.get(req);
}

/**
 * A JSON parser over the body's text: the text is read as express.json reads it (limit,
 * Content-Encoding, charset), then handed to `parse`. An empty body is `{}`, as express.json has it.
 */
function textJsonParser(maxBytes: number, parse: (text: string) => unknown): RequestHandler {
  const text = express.text({ limit: maxBytes, type: () => true, defaultCharset: 'utf-8' });
  return (req, res, next) => {
    const charsetProblem = unsupportedCharset(req.headers['content-type'] ?? '');
    if (charsetProblem !== undefined) return next(charsetProblem);
    text(req, res, (err?: unknown) => {
      if (err !== undefined && err !== null) return next(err);
      const body = req.body as unknown;
      if (typeof body !== 'string') return next();
      try {
        textLengths.set(req, body.length);
        req.body = body.length === 0 ? {} : parse(body);
      } catch (parseError) {
        // A refusal of the parser's own (a number it cannot keep) already says what is wrong, and where.
        if (parseError instanceof ApiError) return next(parseError);
        return next(Object.assign(parseError as Error, { type: 'entity.parse.failed' }));
      }
      next();
    });
  };
}

export function jsonBody(options: BodyOptions): RequestHandler[] {
  const json =
    options.parse === undefined
      ? express.json({ limit: options.maxBytes, strict: false, type: () => true })
      : textJsonParser(options.maxBytes, options.parse);
  const form = express.urlencoded({ limit: options.maxBytes, extended: false, type: () => true });
  const guard: RequestHandler = (req, _res, next) => {
    // Already parsed by a more specific parser mounted earlier (the login form, record bodies).
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

/**
 * How a route's bodies are read, named in its declaration: JSON, or JSON whose text a parser of
 * the route's own reads (records keep how their numbers were written, task arguments reach Python
 * as submitted), or also HTML form posts (the login and logout pages).
 */
export interface BodyParser {
  readonly name: string;
  readonly parse?: (text: string) => unknown;
  readonly allowForm?: boolean;
}

/** Plain JSON (JSON.parse): every route whose declaration names no other parser. */
export const PLAIN_JSON: BodyParser = { name: 'json' };

/** JSON, or an HTML form post. */
export const JSON_OR_FORM: BodyParser = { name: 'json-or-form', allowForm: true };

const LIMIT = 'cybercom body limit';

/** The largest body the app's routes read, set once by the app that mounts them. */
export function setBodyLimit(app: Application, maxBytes: number): void {
  app.locals[LIMIT] = maxBytes;
}

function bodyLimit(req: Request): number {
  const limit = req.app.locals[LIMIT] as unknown;
  if (typeof limit !== 'number') throw new Error('No body limit: the app must call setBodyLimit before mounting routes.');
  return limit;
}

/**
 * The step that reads a route's bodies with its declared parser (PLAIN_JSON when none is
 * declared), for the methods it serves: a method it does not serve is answered 405 unread. The
 * limit is the app's (setBodyLimit), read at the first request.
 */
export function readBody(served: ReadonlySet<string>, parser: BodyParser = PLAIN_JSON): RequestHandler {
  let step: RequestHandler | undefined;
  return (req, res, next) => {
    if (!served.has(req.method)) return next();
    step ??= jsonBody({
      maxBytes: bodyLimit(req),
      ...(parser.parse === undefined ? {} : { parse: parser.parse }),
      ...(parser.allowForm === true ? { allowForm: true } : {}),
    })[0] as RequestHandler;
    step(req, res, next);
  };
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
