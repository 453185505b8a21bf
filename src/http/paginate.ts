/**
 * The paged envelope every listing answers with: `count`, `meta` (page, page_size, pages), the
 * absolute `next`/`previous` links, then `results` (docs/api-behaviour.md, "Paging"). Routes hand
 * over the rows as a list or a counted result and never build the envelope themselves.
 */
import type { Request, Response } from 'express';
import type { EnvelopeHead } from '../render/index.js';
import { requestUrl } from './base-url.js';
import { pageWindow, withoutFirst, type CountedRows, type PageCursor, type PageRequest, type PageWindow } from '../lib/paging.js';
import { pageLinks } from './paging.js';
import { fromArray, respond, respondEnvelope } from './respond.js';

/** An in-memory list (paged here), or a result counted and read by its source (a database). */
export type PageSource<T> = readonly T[] | CountedRows<T>;

export interface PaginateOptions<T> {
  /** Runs when the result is empty, to throw the 404 of a missing container: any row proves it exists. */
  whenEmpty?: () => Promise<void>;
  /** What the response shows of each row. */
  map?: (row: T) => unknown;
  /**
   * Members after `results`, for listings that carry more than their page (the task catalog).
   * Such a page is answered whole rather than streamed, since a streamed `results` comes last.
   */
  trailing?: Record<string, unknown>;
}

export function envelopeHead(req: Request, total: number, window: PageWindow): EnvelopeHead {
  return {
    count: total,
    meta: { page: window.page, page_size: window.pageSize, pages: window.pages },
    ...pageLinks(requestUrl(req), window),
  };
}

/** Answers the page `paging` asks for (after its `skip`), in the negotiated format. */
export async function paginate<T>(
  req: Request,
  res: Response,
  all: PageSource<T>,
  paging: PageRequest,
  options: PaginateOptions<T> = {},
): Promise<void> {
  const skip = paging.skip ?? 0;
  const source = skip === 0 ? all : isCounted(all) ? withoutFirst(all, skip) : all.slice(skip);
  if (isCounted(source)) {
    const { total, window, cursor } = await countAndOpen(source, paging);
    try {
      if (total === 0) await options.whenEmpty?.();
      await respondEnvelope(req, res, envelopeHead(req, total, window), options.map === undefined ? cursor : mapRows(cursor, options.map));
    } finally {
      await cursor.close();
    }
    return;
  }
  const { total, window, rows } = sliceList(source, paging);
  if (total === 0) await options.whenEmpty?.();
  const results = options.map === undefined ? rows : rows.map(options.map);
  if (options.trailing !== undefined) {
    respond(req, res, 200, { ...envelopeHead(req, total, window), results, ...options.trailing });
    return;
  }
  await respondEnvelope(req, res, envelopeHead(req, total, window), fromArray(results));
}

function isCounted<T>(source: PageSource<T>): source is CountedRows<T> {
  return !Array.isArray(source) && 'open' in source;
}

function sliceList<T>(items: readonly T[], paging: PageRequest): { total: number; window: PageWindow; rows: readonly T[] } {
  const window = pageWindow(items.length, paging);
  const rows = window.limit === 0 ? items : items.slice(window.skip, window.skip + window.limit);
  return { total: items.length, window, rows };
}

async function* mapRows<T>(rows: AsyncIterable<T>, fn: (row: T) => unknown): AsyncIterable<unknown> {
  for await (const row of rows) yield fn(row);
}

/**
 * Counts and fetches the first batch at the same time: the page the caller asked for is almost
 * always the page served, so waiting for the count before querying would double the latency.
 * Only a page beyond the last (served as the last page) needs a second query.
 */
async function countAndOpen<T>(
  source: CountedRows<T>,
  paging: PageRequest,
): Promise<{ total: number; window: PageWindow; cursor: PageCursor<T> }> {
  const guess = pageWindow(Number.MAX_SAFE_INTEGER, paging);
  const cursor = source.open(guess);
  let total: number;
  try {
    [total] = await Promise.all([source.count, cursor.hasNext()]);
  } catch (err) {
    await cursor.close().catch(() => undefined);
    throw err;
  }
  const window = pageWindow(total, paging);
  if (window.skip === guess.skip && window.limit === guess.limit) return { total, window, cursor };
  await cursor.close();
  return { total, window, cursor: source.open(window) };
}
