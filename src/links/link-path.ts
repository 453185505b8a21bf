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
