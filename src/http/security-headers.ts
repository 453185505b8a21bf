/**
 * Security headers for every response; a strict Content-Security-Policy with a per-request nonce
 * for the browsable pages (their only inline style/script carries the nonce).
 *
 * The policy is written here rather than by helmet so that the admin site can send the same
 * policy with one relaxation (see contentSecurityPolicy's `inlineStyles`) from its own router.
 */
import { randomBytes } from 'node:crypto';
import type { RequestHandler } from 'express';
import helmet from 'helmet';

export interface CspOptions {
  /**
   * Allow inline styles ('unsafe-inline' instead of the nonce in style-src). Only the admin site
   * needs it: its React components insert <style> elements at run time (styled-components,
   * react-select). Scripts stay nonce-only everywhere.
   */
  inlineStyles?: boolean;
}

export function contentSecurityPolicy(nonce: string, options: CspOptions = {}): string {
  const directives: [string, string[]][] = [
    ['default-src', ["'self'"]],
    ['script-src', ["'self'", `'nonce-${nonce}'`]],
    ['style-src', ["'self'", options.inlineStyles === true ? "'unsafe-inline'" : `'nonce-${nonce}'`]],
    ['img-src', ["'self'", 'data:']],
    ['font-src', ["'self'", 'data:']],
    ['connect-src', ["'self'"]],
    ['form-action', ["'self'"]],
    ['frame-ancestors', ["'none'"]],
    ['object-src', ["'none'"]],
    ['base-uri', ["'self'"]],
  ];
  return directives.map(([name, values]) => `${name} ${values.join(' ')}`).join('; ');
}

export function securityHeaders(options: { https: boolean }): RequestHandler[] {
  const csp: RequestHandler = (_req, res, next) => {
    const nonce = randomBytes(16).toString('base64');
    res.locals.cspNonce = nonce;
    res.setHeader('Content-Security-Policy', contentSecurityPolicy(nonce));
    next();
  };
  const headers = helmet({
    contentSecurityPolicy: false,
    strictTransportSecurity: options.https ? { maxAge: 31536000 } : false,
    crossOriginEmbedderPolicy: false,
    // frame-ancestors 'none' for browsers that know CSP, DENY for those that only know this.
    xFrameOptions: { action: 'deny' },
    referrerPolicy: { policy: 'same-origin' },
  });
  return [csp, headers];
}
