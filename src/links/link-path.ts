/** The path-and-query a link is bound to, and the same for a request that presents one. */

/** Name of the query parameter that carries the link's token. */
export const LINK_PARAM = 'link';

function isLinkSegment(segment: string): boolean {
  return segment.split('=', 1)[0] === LINK_PARAM;
}

/** `url` (a path and query) without its `link` parameters; every other parameter keeps its exact text. */
export function withoutLinkParam(url: string): string {
  const q = url.indexOf('?');
  if (q === -1) return url;
  const kept = url
    .slice(q + 1)
    .split('&')
    .filter((segment) => segment !== '' && !isLinkSegment(segment));
  return kept.length === 0 ? url.slice(0, q) : `${url.slice(0, q)}?${kept.join('&')}`;
}

/** `path` with the link's token added as the last parameter. */
export function withLinkParam(path: string, token: string): string {
  return `${path}${path.includes('?') ? '&' : '?'}${LINK_PARAM}=${encodeURIComponent(token)}`;
}

function decodeLoosely(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text; // malformed percent-encoding: compared as written
  }
}

const canonicalPart = (text: string): string => encodeURIComponent(decodeLoosely(text));

/**
 * One spelling of a path and query, so that a link still matches after a client re-encodes its
 * URL (Python's requests and httpx write `{` as `%7B`, urllib leaves it): every path segment and
 * every parameter name and value is decoded and encoded again the same way. Order is kept.
 */
export function canonicalPathAndQuery(url: string): string {
  const q = url.indexOf('?');
  const path = (q === -1 ? url : url.slice(0, q)).split('/').map(canonicalPart).join('/');
  if (q === -1) return path;
  const query = url
    .slice(q + 1)
    .split('&')
    .filter((segment) => segment !== '')
    .map((segment) => {
      const eq = segment.indexOf('=');
      const [name, value] = eq === -1 ? [segment, undefined] : [segment.slice(0, eq), segment.slice(eq + 1)];
      const part = (text: string) => canonicalPart(text.replace(/\+/g, ' '));
      return value === undefined ? part(name) : `${part(name)}=${part(value)}`;
    });
  return query.length === 0 ? path : `${path}?${query.join('&')}`;
}
