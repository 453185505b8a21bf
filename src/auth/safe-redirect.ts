/**
 * The login page's `next` parameter: only a same-site path is followed, so the login form can
 * never be used to bounce a user to another site (open redirect). Anything else gives the default.
 */
import { urls } from '../http/urls.js';

export const DEFAULT_AFTER_LOGIN = urls.root();

export function safeNextPath(candidate: unknown, fallback = DEFAULT_AFTER_LOGIN): string {
  if (typeof candidate !== 'string' || candidate.length === 0 || candidate.length > 2048) return fallback;
  // A single leading slash; "//host" and "/\host" are protocol-relative URLs in browsers.
  if (!candidate.startsWith('/') || candidate.startsWith('//') || candidate.startsWith('/\\')) return fallback;
  // Control characters and backslashes are normalised differently by browsers: refuse them outright.
  if (/[\u0000-\u001f\u007f\\]/.test(candidate)) return fallback;
  const base = new URL('http://same-site.invalid');
  let resolved: URL;
  try {
    resolved = new URL(candidate, base);
  } catch {
    return fallback;
  }
  if (resolved.origin !== base.origin) return fallback;
  // Dot segments can leave "//host" after normalisation ("/.//evil.com"): the Location header
  // would then be protocol-relative again.
  if (resolved.pathname.startsWith('//')) return fallback;
  return resolved.pathname + resolved.search + resolved.hash;
}
