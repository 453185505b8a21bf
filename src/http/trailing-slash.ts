/**
 * A trailing slash is canonical. GET/HEAD without it redirect (so browsers and links settle on
 * one URL); other methods are served as if the slash were there, since redirecting a POST loses
 * its body in many clients.
 */
import type { RequestHandler } from 'express';
import { splitUrl } from './format.js';

export function canonicalTrailingSlash(prefix = '/api'): RequestHandler {
  return (req, res, next) => {
    const [path, search] = splitUrl(req.url);
    if (!path.startsWith(prefix) || path.endsWith('/')) return next();
    const canonical = `${path}/${search}`;
    if (req.method === 'GET' || req.method === 'HEAD') {
      // Relative to the original URL so a reverse-proxy prefix stays intact.
      res.redirect(301, `${req.baseUrl}${canonical}`);
      return;
    }
    req.url = canonical;
    next();
  };
}
