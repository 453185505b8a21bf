import { describe, expect, it } from 'vitest';
import { pageWindow, type PageWindow } from '../../../src/lib/paging.js';
import { pageLinks, parsePaging, parseSkip } from '../../../src/http/paging.js';
import { apiError } from '../documents/api-error.js';

describe('parsePaging', () => {
  it('defaults to page 1 of 10', () => {
    expect(parsePaging({})).toEqual({ page: 1, pageSize: 10 });
  });

  it('takes its default page size from the caller', () => {
    expect(parsePaging({}, 25)).toEqual({ page: 1, pageSize: 25 });
    expect(parsePaging({ page_size: '5' }, 25)).toEqual({ page: 1, pageSize: 5 });
  });

  it.each([
    ['1', 1],
    ['2', 2],
    ['37', 37],
    ['007', 7],
    ['0', 1],
    ['-1', 1],
    ['-0', 1],
    ['-99', 1],
    ['', 1],
  ])('reads page %j as %d', (raw, expected) => {
    expect(parsePaging({ page: raw }).page).toBe(expected);
  });

  it('caps absurdly large pages instead of losing precision', () => {
    expect(parsePaging({ page: '99999999999999999999999' }).page).toBe(Number.MAX_SAFE_INTEGER);
  });

  it.each(['abc', '1.0', '1.5', '1e3', '0x10', '+1', ' 1', '1 ', '1,000', 'Infinity', 'NaN', '--1', '½', '١'])(
    'refuses page %j with 400 invalid_page',
    (raw) => {
      const err = apiError(() => parsePaging({ page: raw }));
      expect(err.status).toBe(400);
      expect(err.code).toBe('invalid_page');
      expect(err.message).toContain('"page"');
    },
  );

  it.each([
    ['0', 0],
    ['1', 1],
    ['10', 10],
    ['250', 250],
    ['', 10],
  ])('reads page_size %j as %d', (raw, expected) => {
    expect(parsePaging({ page_size: raw }).pageSize).toBe(expected);
  });

  it.each(['-1', '-10', 'abc', '2.5', '10.0', '1e2', '0x10', '+5', ' 5', '5 ', 'all'])(
    'refuses page_size %j with 400 invalid_page_size',
    (raw) => {
      const err = apiError(() => parsePaging({ page_size: raw }));
      expect(err.status).toBe(400);
      expect(err.code).toBe('invalid_page_size');
      expect(err.message).toContain('"page_size"');
    },
  );

  it('says when a page size is negative', () => {
    expect(apiError(() => parsePaging({ page_size: '-3' })).message).toContain('negative');
  });

  it('refuses repeated or structured parameters', () => {
    expect(apiError(() => parsePaging({ page: ['1', '2'] })).code).toBe('invalid_page');
    expect(apiError(() => parsePaging({ page_size: ['10', '20'] })).code).toBe('invalid_page_size');
    expect(apiError(() => parsePaging({ page: { a: '1' } })).code).toBe('invalid_page');
    expect(apiError(() => parsePaging({ page_size: ['10'] })).code).toBe('invalid_page_size');
  });
});

describe('pageLinks', () => {
  const url = (s: string) => new URL(s);
  const win = (page: number, pages: number, pageSize = 10): PageWindow => ({
    page,
    pages,
    pageSize,
    skip: (page - 1) * pageSize,
    limit: pageSize,
  });

  it('has neither link on a single page (including an empty result)', () => {
    expect(pageLinks(url('https://h.example/api/data_store/data/db/col/'), win(1, 1))).toEqual({ next: null, previous: null });
    expect(pageLinks(url('https://h.example/x/?page_size=0'), pageWindow(0, { page: 1, pageSize: 0 }))).toEqual({
      next: null,
      previous: null,
    });
  });

  it('adds page=2 as next on the first page when the URL had no page', () => {
    expect(pageLinks(url('http://localhost:8080/api/data_store/data/db/col/?page_size=5'), win(1, 3, 5))).toEqual({
      next: 'http://localhost:8080/api/data_store/data/db/col/?page_size=5&page=2',
      previous: null,
    });
  });

  it('gives previous page=1 (not a URL without page) and no next on the last page', () => {
    expect(pageLinks(url('https://h.example/c/?page=2'), win(2, 2))).toEqual({
      next: null,
      previous: 'https://h.example/c/?page=1',
    });
  });

  it('replaces page where it stood and keeps every other parameter, in order and encoding', () => {
    const request = url(
      'https://h.example/c/?format=json&page=3&query=%7B%22filter%22%3A%7B%22a%22%3A%22x+y%22%7D%7D&page_size=20&tag=a&tag=b',
    );
    expect(pageLinks(request, win(3, 5, 20))).toEqual({
      next: 'https://h.example/c/?format=json&page=4&query=%7B%22filter%22%3A%7B%22a%22%3A%22x+y%22%7D%7D&page_size=20&tag=a&tag=b',
      previous: 'https://h.example/c/?format=json&page=2&query=%7B%22filter%22%3A%7B%22a%22%3A%22x+y%22%7D%7D&page_size=20&tag=a&tag=b',
    });
  });

  it('uses the clamped page, not the requested one', () => {
    // The caller asked for page 99 of 4; the window says 4.
    expect(pageLinks(url('https://h.example/c/?page=99'), win(4, 4))).toEqual({
      next: null,
      previous: 'https://h.example/c/?page=3',
    });
  });

  it('does not confuse page_size or a percent-encoded page with each other', () => {
    expect(pageLinks(url('https://h.example/c/?page_size=10&pag%65=2'), win(2, 3)).next).toBe('https://h.example/c/?page_size=10&page=3');
  });

  it('drops the fragment and keeps the path, including a format suffix', () => {
    expect(pageLinks(url('https://h.example/c/.json?page=1#top'), win(1, 2)).next).toBe('https://h.example/c/.json?page=2');
  });
});

describe('parseSkip', () => {
  it('reads digits, 0 when absent or empty, capping huge values', () => {
    expect(parseSkip({})).toBe(0);
    expect(parseSkip({ skip: '' })).toBe(0);
    expect(parseSkip({ skip: '25' })).toBe(25);
    expect(parseSkip({ skip: '99999999999999999999' })).toBe(Number.MAX_SAFE_INTEGER);
  });

  it.each(['-1', '1.5', '1e3', 'x', ' 2'])('refuses skip %j with 400 invalid_skip', (raw) => {
    const err = apiError(() => parseSkip({ skip: raw }));
    expect(err.status).toBe(400);
    expect(err.code).toBe('invalid_skip');
  });
});

describe('pageLinks against the URL API', () => {
  /** What assigning the new query through the URL API gives: the links as pageLinks made them before it split the URL itself. */
  function reference(requestUrl: URL, page: number): string {
    const url = new URL(requestUrl.href);
    url.hash = '';
    const kept: string[] = [];
    let placed = false;
    for (const segment of url.search.replace(/^\?/, '').split('&')) {
      if (segment === '') continue;
      const name = segment.split('=', 1)[0]!.replace(/\+/g, ' ');
      let isPage: boolean;
      try {
        isPage = decodeURIComponent(name) === 'page';
      } catch {
        isPage = name === 'page';
      }
      if (!isPage) kept.push(segment);
      else if (!placed) {
        kept.push(`page=${page}`);
        placed = true;
      }
    }
    if (!placed) kept.push(`page=${page}`);
    url.search = `?${kept.join('&')}`;
    return url.href;
  }

  const window = (page: number): PageWindow => ({ page, pages: 9, pageSize: 10, skip: (page - 1) * 10, limit: 10 });

  it.each([
    'http://h.example/c/',
    'http://h.example/c/?',
    'http://h.example/c/#',
    'http://h.example/c/?#',
    'http://h.example/c/?#frag',
    'http://h.example/c/?&&page=4&&',
    'http://h.example:8080/c/.json?page=4&page=5&x=1#top',
    "https://h.example/c/?q='quote'&s=a b&t=<x>&u=%zz&page=3",
    'https://h.example/c/?PAGE=2&pag%65=3&page%3D=1&page',
    'https://h.example/c/?query=%7B%22a%22%3A%22%C3%A9%22%7D&page=+3',
    'https://h.example/%2F%2Fx/?a=é&page=2',
  ])('gives the links the URL API gives for %s', (href) => {
    const url = new URL(href);
    expect(pageLinks(url, window(4))).toEqual({ next: reference(url, 5), previous: reference(url, 3) });
  });
});
