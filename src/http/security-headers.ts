/**
 * Security headers for every response, in two sets chosen by what the answer turns out to be:
 *
 * - **Pages and everything else** (HTML, scripts and JSONP, styles, images, answers without a body): a
 *   strict Content-Security-Policy with a per-request nonce (a page's only inline style/script
 *   carries it) and the headers helmet sets.
 * - **Machine answers** (JSON, XML, CSV, NDJSON): the set OWASP's REST Security cheat
 *   sheet recommends for APIs: `Cache-Control: no-store`, a policy that allows nothing
 *   (`default-src 'none'; frame-ancestors 'none'`), `X-Content-Type-Options: nosniff`,
 *   `X-Frame-Options: DENY`, `Cross-Origin-Resource-Policy` and HSTS where it is sent at all.
 *   The browser-page headers (referrer, opener and agent-cluster policies, DNS prefetch, IE's
 *   download and XSS switches) govern documents a browser shows; a script's fetch of JSON has
 *   nothing for them to govern, and sending them would cost every machine answer most of its
 *   header bytes.
 *
 * The set is chosen when the headers go out (writeHead), from the Content-Type the answer was
 * given: that is where the representation is final, whichever route, error handler or renderer
 * chose it, so no answer can go out with the wrong set or none. What a route set itself stays:
 * its own Content-Security-Policy (the admin site's, the manual's; the answer then gets the page
 * set around it) and its own Cache-Control (static files, the favicon).
 *
 * The page policy is written here rather than by helmet so that the admin site can send the same
 * policy with one relaxation (see contentSecurityPolicy's `inlineStyles`) from its own router.
 * Both run on every request, so what does not change between requests is worked out once: the
 * policy's text around the nonce, and the headers helmet sets (helmet's own middleware is run
 * once against a recorder at start-up; without the CSP, everything it sets is fixed).
 */
import { randomFillSync } from 'node:crypto';
import type { ServerResponse } from 'node:http';
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

/** The Content-Security-Policy of machine answers: nothing may load, nothing may frame them. */
export const API_POLICY = "default-src 'none'; frame-ancestors 'none'";

/** The helmet headers machine answers keep (the others govern pages a browser shows). */
const API_HELMET_HEADERS = new Set([
  'strict-transport-security',
  'x-content-type-options',
  'x-frame-options',
  'cross-origin-resource-policy',
]);

/**
 * Content-Types of machine answers: the renderer's JSON, XML, CSV and NDJSON, and any +json or
 * +xml type. Not JavaScript: JSONP shares its type with the pages' script files, which keep the
 * page set (a worker script would run under its own answer's policy).
 */
const MACHINE_TYPE = /^\s*(application\/(json|xml|x-ndjson|ndjson|[^;]*\+json|[^;]*\+xml)|text\/csv)\s*(;|$)/i;

/** Whether an answer with this Content-Type gets the machine set. */
export function isMachineAnswer(contentType: unknown): boolean {
  return typeof contentType === 'string' && MACHINE_TYPE.test(contentType);
}

/** The Content-Type an answer goes out with: as set on the response, or as given to writeHead. */
function contentTypeOf(res: ServerResponse, args: unknown[]): unknown {
  const set = res.getHeader('Content-Type');
  if (set !== undefined) return set;
  const headers = args.at(-1);
  if (headers === null || typeof headers !== 'object' || Array.isArray(headers)) return undefined;
  for (const [name, value] of Object.entries(headers as Record<string, unknown>)) {
    if (name.toLowerCase() === 'content-type') return value;
  }
  return undefined;
}

export function securityHeaders(options: { https: boolean; imageOrigins?: readonly string[] }): RequestHandler[] {
  const fixed = helmetHeaders(options);
  const machine = fixed.filter(([name]) => API_HELMET_HEADERS.has(name.toLowerCase()));
  const policyParts = policyTemplate({ imageOrigins: options.imageOrigins ?? [] }).split('NONCE');

  /** Sets the answer's security headers, just before they are written. */
  const addHeaders = (res: ServerResponse, nonce: string, args: unknown[]): void => {
    const ownPolicy = res.hasHeader('Content-Security-Policy');
    if (!ownPolicy && isMachineAnswer(contentTypeOf(res, args))) {
      res.setHeader('Content-Security-Policy', API_POLICY);
      if (!res.hasHeader('Cache-Control')) res.setHeader('Cache-Control', 'no-store');
      for (const [name, value] of machine) res.setHeader(name, value);
      return;
    }
    if (!ownPolicy) res.setHeader('Content-Security-Policy', policyParts.join(nonce));
    for (const [name, value] of fixed) res.setHeader(name, value);
  };

  const headers: RequestHandler = (_req, res, next) => {
    // The nonce is drawn now: a page writes it into its body before its headers go out.
    const nonce = newNonce();
    res.locals.cspNonce = nonce;
    // Node writes every answer's headers through writeHead (end, write and flushHeaders call it).
    const writeHead = res.writeHead;
    res.writeHead = function (this: ServerResponse, ...args: unknown[]) {
      addHeaders(this, nonce, args);
      return (writeHead as (...a: unknown[]) => ServerResponse).apply(this, args);
    } as typeof res.writeHead;
    next();
  };
  return [headers];
}
