/**
 * Paging for every envelope (docs/api-behaviour.md, "Paging"): parse `page`/`page_size` and build
 * the `next`/`previous` links. Where a page lies in a result (its window) is src/lib/paging.ts's.
 */
import { badRequest } from '../errors.js';
import type { PageRequest, PageWindow } from '../lib/paging.js';

/** Digits only: "+1", " 1", "1e3", "0x10" and "1.0" are all refused, unlike with Number(). */
const UNSIGNED = /^\d+$/;
const SIGNED = /^-?\d+$/;

/**
 * Reads one query parameter. Express gives an array for `?page=1&page=2` and an object for
 * `?page[x]=1`; both are refused rather than guessed at. An empty value (`?page=`, as HTML forms
 * send it) counts as not given.
 */
function single(value: unknown, name: string, code: string): string | undefined {
  if (value === undefined) return undefined;
  if (Array.isArray(value)) throw badRequest(code, `The "${name}" parameter was given more than once.`, { parameter: name });
  if (typeof value !== 'string') throw badRequest(code, `The "${name}" parameter must be a single integer.`, { parameter: name });
  return value === '' ? undefined : value;
}

/** Huge values are capped instead of refused: they mean "the last page" or "everything" anyway. */
const toCappedInteger = (digits: string): number => Math.min(Number(digits), Number.MAX_SAFE_INTEGER);

/**
 * `params` is typically `req.query`. `page` defaults to 1 and values below 1 mean page 1;
 * `page_size` defaults to `defaultPageSize`, 0 means all records, negative values are refused.
 */
export function parsePaging(params: { page?: unknown; page_size?: unknown }, defaultPageSize = 10): PageRequest {
  const rawPage = single(params.page, 'page', 'invalid_page');
  const rawSize = single(params.page_size, 'page_size', 'invalid_page_size');

  let page = 1;
  if (rawPage !== undefined) {
    if (!SIGNED.test(rawPage)) {
      throw badRequest('invalid_page', `The "page" parameter must be an integer; got ${JSON.stringify(rawPage)}.`, { parameter: 'page' });
    }
    page = Math.max(1, toCappedInteger(rawPage)); // zero and negative pages mean the first
  }

  let pageSize = defaultPageSize;
  if (rawSize !== undefined) {
    if (!UNSIGNED.test(rawSize)) {
      const reason = SIGNED.test(rawSize) ? 'must not be negative' : 'must be an integer';
      throw badRequest('invalid_page_size', `The "page_size" parameter ${reason} (0 means all records); got ${JSON.stringify(rawSize)}.`, {
        parameter: 'page_size',
      });
    }
    pageSize = toCappedInteger(rawSize);
  }
  return { page, pageSize };
}

/**
 * The `skip` parameter of a record listing: how many leading rows of the result to leave out
 * before paging (0 when not given). Digits only, as `page_size`; huge values are capped.
 */
export function parseSkip(params: { skip?: unknown }): number {
  const raw = single(params.skip, 'skip', 'invalid_skip');
  if (raw === undefined) return 0;
  if (!UNSIGNED.test(raw)) {
    const reason = SIGNED.test(raw) ? 'must not be negative' : 'must be an integer';
    throw badRequest('invalid_skip', `The "skip" parameter ${reason}; got ${JSON.stringify(raw)}.`, { parameter: 'skip' });
  }
  return toCappedInteger(raw);
}

/**
 * Absolute `next`/`previous` URLs. Only the `page` parameter is touched: it is replaced where it
 * stood (or appended), and every other parameter keeps its position and its exact encoding, so
 * a `query` or `aggregate` value is carried over byte for byte.
 */
export function pageLinks(requestUrl: URL, window: PageWindow): { next: string | null; previous: string | null } {
  const hasNext = window.page < window.pages;
  const hasPrevious = window.page > 1;
  if (!hasNext && !hasPrevious) return { next: null, previous: null };
  const withPage = pageUrls(requestUrl);
  return { next: hasNext ? withPage(window.page + 1) : null, previous: hasPrevious ? withPage(window.page - 1) : null };
}

/**
 * The request's URL with a given page, as strings: the URL is taken apart once for both links.
 * Its parameters are already in the URL's serialised form (the URL parser percent-encoded what
 * needs it), so they are joined back as they are: what assigning them to `url.search` would give,
 * without a parse of the whole URL per link.
 */
function pageUrls(requestUrl: URL): (page: number) => string {
  const { href, search, hash } = requestUrl;
  // The serialisation ends with the query, then the fragment; an empty one may leave its "?" or
  // "#" behind (neither can end a path).
  let stem = href.slice(0, href.length - hash.length);
  if (hash === '' && stem.endsWith('#')) stem = stem.slice(0, -1);
  stem = stem.slice(0, stem.length - search.length);
  if (search === '' && stem.endsWith('?')) stem = stem.slice(0, -1);
  const segments = search
    .replace(/^\?/, '')
    .split('&')
    .filter((s) => s !== '');
  const at = segments.findIndex(isPageParam);
  // Further `page` parameters (refused by parsePaging anyway) are dropped.
  const others = segments.filter((segment, i) => i === at || !isPageParam(segment));
  // Only later `page` parameters were left out, so the first stays at its index.
  return (page) => {
    const out = [...others];
    if (at === -1) out.push(`page=${page}`);
    else out[at] = `page=${page}`;
    return `${stem}?${out.join('&')}`;
  };
}

function isPageParam(segment: string): boolean {
  const name = segment.split('=', 1)[0]!.replace(/\+/g, ' ');
  try {
    return decodeURIComponent(name) === 'page';
  } catch {
    return name === 'page'; // malformed percent-encoding: compare as written
  }
}
