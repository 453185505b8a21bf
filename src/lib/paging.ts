/**
 * Pages of a counted result, in terms any layer can use: which page is asked for, where it lies
 * in the whole result, and a result as a count and a cursor opened on one page. The HTTP
 * paginator (src/http/paginate.ts) reads such a result, counting and fetching in parallel; a
 * service returns one without knowing about requests or envelopes.
 */

export interface PageRequest {
  page: number;
  /** 0 = all records. */
  pageSize: number;
  /** Leading rows of the result left out before it is paged (a listing's `skip`); 0 when absent. */
  skip?: number;
}

export interface PageWindow {
  page: number;
  pageSize: number;
  pages: number;
  skip: number;
  /** 0 = no limit. */
  limit: number;
}

/** Where a page lies in a result of `total` records; a page beyond the last is the last page. */
export function pageWindow(total: number, req: PageRequest): PageWindow {
  const count = Math.max(0, Math.floor(total));
  if (req.pageSize <= 0) return { page: 1, pageSize: 0, pages: 1, skip: 0, limit: 0 };
  // An empty result still has one (empty) page.
  const pages = Math.max(1, Math.ceil(count / req.pageSize));
  const page = Math.min(Math.max(1, Math.floor(req.page)), pages);
  return { page, pageSize: req.pageSize, pages, skip: (page - 1) * req.pageSize, limit: req.pageSize };
}

/** The rows of one page, closed once the page is answered. */
export interface PageCursor<T> extends AsyncIterable<T> {
  hasNext(): Promise<boolean>;
  close(): Promise<void>;
}

/** A result that is counted and read: its count, and a cursor opened on one window. */
export interface CountedRows<T> {
  count: Promise<number>;
  open(window: PageWindow): PageCursor<T>;
}

/**
 * The result without its first `skip` rows, paged as if they had never been there: its count is
 * of the rest, and each window opens that many rows further on, so that the source (a database)
 * leaves them out rather than reading them.
 */
export function withoutFirst<T>(rows: CountedRows<T>, skip: number): CountedRows<T> {
  return {
    count: rows.count.then((total) => Math.max(0, total - skip)),
    open: (window) => rows.open({ ...window, skip: Math.min(window.skip + skip, Number.MAX_SAFE_INTEGER) }),
  };
}

/** A page read whole, in one query, as a cursor. */
export function cursorOver<T>(rows: Promise<readonly T[]>): PageCursor<T> {
  // A page opened but never read (a guess beyond the last page, replaced once the count is
  // known) must not end the process with an unhandled rejection; whoever reads it sees the error.
  rows.catch(() => undefined);
  let taken = 0;
  return {
    hasNext: async () => (await rows).length > taken,
    close: async () => undefined,
    async *[Symbol.asyncIterator]() {
      for (const row of await rows) {
        taken += 1;
        yield row;
      }
    },
  };
}
