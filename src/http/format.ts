/**
 * Output-format negotiation. Order: a `/.json`-style suffix after the last slash, then
 * `?format=`, then `Accept: application/json` (JSON); anything else gets the browsable page.
 */
import type { Request, RequestHandler } from 'express';
import { badRequest } from '../errors.js';
import { FORMATS, isFormat, type Format } from '../render/index.js';

const SUFFIX = /\/\.(json|jsonp|xml|api|csv|ndjson)$/;

function fromAccept(req: Request): Format {
  const accept = req.headers.accept ?? '';
  // JSON wins only when the client asks for it explicitly (scripts, fetch with Accept set).
  if (/application\/json/i.test(accept) && !/text\/html/i.test(accept)) return 'json';
  if (/application\/(xml)/i.test(accept) && !/text\/html/i.test(accept)) return 'xml';
  return 'api';
}

/** Rewrites `/path/.json` to `/path/` and records the format on the request. */
export function negotiateFormat(): RequestHandler {
  return (req, _res, next) => {
    const [path, search = ''] = splitUrl(req.url);
    const suffix = SUFFIX.exec(path);
    let format: Format | undefined;
    if (suffix) {
      format = suffix[1] as Format;
      req.url = path.slice(0, path.length - suffix[0].length + 1) + search;
    }
    const param = req.query.format;
    if (format === undefined && param !== undefined) {
      if (!isFormat(param)) {
        req.format = 'json';
        return next(badRequest('invalid_format', `Unknown format "${String(param)}". Use one of: ${FORMATS.join(', ')}.`));
      }
      format = param;
    }
    req.format = format ?? fromAccept(req);
    next();
  };
}

export function splitUrl(url: string): [string, string] {
  const q = url.indexOf('?');
  return q === -1 ? [url, ''] : [url.slice(0, q), url.slice(q)];
}
