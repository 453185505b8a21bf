/**
 * Security headers for every response; a strict Content-Security-Policy with a per-request nonce
 * for the browsable pages (their only inline style/script carries the nonce).
 *
 * The policy is written here rather than by helmet so that the admin site can send the same
 * policy with one relaxation (see contentSecurityPolicy's `inlineStyles`) from its own router.
 *
 * Both run on every request, so what does not change between requests is worked out once: the
 * policy's text around the nonce, and the headers helmet sets (helmet's own middleware is run
 * once against a recorder at start-up; without the CSP, everything it sets is fixed).
 */
import { randomFillSync } from 'node:crypto';
import type { RequestHandler } from 'express';
import helmet from 'helmet';

export interface CspOptions {
  /**
   * Allow inline styles ('unsafe-inline' instead of the nonce in style-src). Only the admin site
   * needs it: its React components insert <style> elements at run time (styled-components,
   * react-select). Scripts stay nonce-only everywhere.
   */
  inlineStyles?: boolean;
  /**
   * Further origins images may come from: the explorer map's tile server when one is configured
   * (its tiles are <img> elements). Nothing else is ever added.
   */
  imageOrigins?: readonly string[];
}

/** The origin (scheme, host, port) of a tile URL template, as img-src needs it. */
export function tileOrigin(tileUrl: string): string {
  // The settings refuse placeholders in the host ({s} subdomains), so the origin is the template's own.
  return new URL(tileUrl.replace(/\{[a-z]\}/g, '0')).origin;
}

const NONCE_BYTES = 16;
/** Nonces drawn from one filled buffer of this many bytes, as node:crypto's randomUUID does for ids. */
const NONCE_POOL_BYTES = NONCE_BYTES * 256;
const noncePool = Buffer.alloc(NONCE_POOL_BYTES);
let nonceOffset = NONCE_POOL_BYTES;

/**
 * A fresh 128-bit nonce from the operating system's CSPRNG, base64. One system call fills the
 * pool for 256 nonces, and no byte is used twice, so each nonce is as unpredictable as one
 * read on its own.
 */
export function newNonce(): string {
  if (nonceOffset === NONCE_POOL_BYTES) {
    randomFillSync(noncePool);
    nonceOffset = 0;
  }
  const nonce = noncePool.toString('base64', nonceOffset, nonceOffset + NONCE_BYTES);
  nonceOffset += NONCE_BYTES;
  return nonce;
}

/**
 * A Content-Security-Policy's text: the service's directives (everything from this origin only,
 * no framing, no plugins), with the given extra sources for scripts, styles and images.
 */
export function policyText(sources: { scripts: readonly string[]; styles: readonly string[]; images?: readonly string[] }): string {
  const directives: [string, string[]][] = [
    ['default-src', ["'self'"]],
    ['script-src', ["'self'", ...sources.scripts]],
    ['style-src', ["'self'", ...sources.styles]],
    ['img-src', ["'self'", 'data:', ...(sources.images ?? [])]],
    ['font-src', ["'self'", 'data:']],
    ['connect-src', ["'self'"]],
    ['form-action', ["'self'"]],
    ['frame-ancestors', ["'none'"]],
    ['object-src', ["'none'"]],
    ['base-uri', ["'self'"]],
  ];
  return directives.map(([name, values]) => `${name} ${values.join(' ')}`).join('; ');
}

/** The policy's text with NONCE where the nonce goes. */
function policyTemplate(options: CspOptions): string {
  return policyText({
    scripts: [`'nonce-NONCE'`],
    styles: [options.inlineStyles === true ? "'unsafe-inline'" : `'nonce-NONCE'`],
    images: options.imageOrigins ?? [],
  });
}

/** The policy split around its nonces, once per kind of policy. */
const POLICY_PARTS = {
  strict: policyTemplate({}).split('NONCE'),
  inlineStyles: policyTemplate({ inlineStyles: true }).split('NONCE'),
};

export function contentSecurityPolicy(nonce: string, options: CspOptions = {}): string {
  return (options.inlineStyles === true ? POLICY_PARTS.inlineStyles : POLICY_PARTS.strict).join(nonce);
}

/** The headers helmet sets with these options, recorded by running it once. */
function helmetHeaders(options: { https: boolean }): [string, string][] {
  const middleware = helmet({
    contentSecurityPolicy: false,
    strictTransportSecurity: options.https ? { maxAge: 31536000 } : false,
    crossOriginEmbedderPolicy: false,
    // frame-ancestors 'none' for browsers that know CSP, DENY for those that only know this.
    xFrameOptions: { action: 'deny' },
    referrerPolicy: { policy: 'same-origin' },
  });
  const recorded: [string, string][] = [];
  const recorder = {
    setHeader(name: string, value: string) {
      recorded.push([name, value]);
    },
    // helmet removes X-Powered-By, which express is told never to send (app.disable).
    removeHeader() {},
  };
  let done = false;
  middleware({} as never, recorder as never, (error?: unknown) => {
    if (error !== undefined) throw error instanceof Error ? error : new Error(String(error));
    done = true;
  });
  // helmet sets its headers synchronously; anything else would make the recording incomplete.
  if (!done) throw new Error('helmet did not finish synchronously');
  return recorded;
}

export function securityHeaders(options: { https: boolean; imageOrigins?: readonly string[] }): RequestHandler[] {
  const fixed = helmetHeaders(options);
  const policyParts = policyTemplate({ imageOrigins: options.imageOrigins ?? [] }).split('NONCE');
  const headers: RequestHandler = (_req, res, next) => {
    const nonce = newNonce();
    res.locals.cspNonce = nonce;
    res.setHeader('Content-Security-Policy', policyParts.join(nonce));
    for (const [name, value] of fixed) res.setHeader(name, value);
    next();
  };
  return [headers];
}
