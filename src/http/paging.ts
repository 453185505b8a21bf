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
  return {
    next: window.page < window.pages ? withPage(requestUrl, window.page + 1) : null,
    previous: window.page > 1 ? withPage(requestUrl, window.page - 1) : null,
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

function withPage(requestUrl: URL, page: number): string {
  const url = new URL(requestUrl.href);
  url.hash = '';
  const segments = url.search
    .replace(/^\?/, '')
    .split('&')
    .filter((s) => s !== '');
  const out: string[] = [];
  let placed = false;
  for (const segment of segments) {
    if (!isPageParam(segment)) out.push(segment);
    else if (!placed) {
      out.push(`page=${page}`);
      placed = true;
    }
    // Further `page` parameters (refused by parsePaging anyway) are dropped.
  }
  if (!placed) out.push(`page=${page}`);
  url.search = `?${out.join('&')}`;
  return url.href;
}
