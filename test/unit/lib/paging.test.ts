import { describe, expect, it } from 'vitest';
import { cursorOver, pageWindow, withoutFirst, type PageWindow } from '../../../src/lib/paging.js';

describe('pageWindow', () => {
  const cases: [string, number, { page: number; pageSize: number }, PageWindow][] = [
    ['first page', 95, { page: 1, pageSize: 10 }, { page: 1, pageSize: 10, pages: 10, skip: 0, limit: 10 }],
    ['middle page', 95, { page: 4, pageSize: 10 }, { page: 4, pageSize: 10, pages: 10, skip: 30, limit: 10 }],
    ['partial last page', 95, { page: 10, pageSize: 10 }, { page: 10, pageSize: 10, pages: 10, skip: 90, limit: 10 }],
    ['beyond the last page', 95, { page: 11, pageSize: 10 }, { page: 10, pageSize: 10, pages: 10, skip: 90, limit: 10 }],
    ['far beyond', 95, { page: 9_000_000, pageSize: 10 }, { page: 10, pageSize: 10, pages: 10, skip: 90, limit: 10 }],
    ['page 0', 95, { page: 0, pageSize: 10 }, { page: 1, pageSize: 10, pages: 10, skip: 0, limit: 10 }],
    ['exact multiple, last page', 100, { page: 10, pageSize: 10 }, { page: 10, pageSize: 10, pages: 10, skip: 90, limit: 10 }],
    ['exact multiple, one beyond', 100, { page: 11, pageSize: 10 }, { page: 10, pageSize: 10, pages: 10, skip: 90, limit: 10 }],
    ['one more than a multiple', 101, { page: 11, pageSize: 10 }, { page: 11, pageSize: 10, pages: 11, skip: 100, limit: 10 }],
    ['empty collection', 0, { page: 1, pageSize: 10 }, { page: 1, pageSize: 10, pages: 1, skip: 0, limit: 10 }],
    ['empty collection, page 5', 0, { page: 5, pageSize: 10 }, { page: 1, pageSize: 10, pages: 1, skip: 0, limit: 10 }],
    ['fewer records than a page', 3, { page: 2, pageSize: 10 }, { page: 1, pageSize: 10, pages: 1, skip: 0, limit: 10 }],
    ['page size 1', 3, { page: 3, pageSize: 1 }, { page: 3, pageSize: 1, pages: 3, skip: 2, limit: 1 }],
    ['page_size 0 = everything', 95, { page: 1, pageSize: 0 }, { page: 1, pageSize: 0, pages: 1, skip: 0, limit: 0 }],
    ['page_size 0 with page 3', 95, { page: 3, pageSize: 0 }, { page: 1, pageSize: 0, pages: 1, skip: 0, limit: 0 }],
    ['page_size 0, empty', 0, { page: 1, pageSize: 0 }, { page: 1, pageSize: 0, pages: 1, skip: 0, limit: 0 }],
  ];

  it.each(cases)('%s', (_what, total, req, expected) => {
    expect(pageWindow(total, req)).toEqual(expected);
  });
});

describe('cursorOver', () => {
  it('hands out the rows of a page read whole, once, and says whether any are left', async () => {
    const cursor = cursorOver(Promise.resolve(['a', 'b']));
    expect(await cursor.hasNext()).toBe(true);
    const seen: string[] = [];
    for await (const row of cursor) seen.push(row);
    expect(seen).toEqual(['a', 'b']);
    expect(await cursor.hasNext()).toBe(false);
    await cursor.close();
  });

  it('gives a failed read to whoever reads it, and a page never read does not reject unhandled', async () => {
    const unhandled: unknown[] = [];
    const listener = (reason: unknown) => void unhandled.push(reason);
    process.on('unhandledRejection', listener);
    try {
      const failed = cursorOver(Promise.reject(new Error('engine gone')));
      cursorOver(Promise.reject(new Error('never read')));
      await expect(failed.hasNext()).rejects.toThrow('engine gone');
      await new Promise((resolve) => setTimeout(resolve, 10));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', listener);
    }
  });
});

describe('withoutFirst', () => {
  it('counts the rest and opens every window that many rows further on', async () => {
    const opened: PageWindow[] = [];
    const rows = withoutFirst({ count: Promise.resolve(12), open: (window) => (opened.push(window), cursorOver(Promise.resolve([]))) }, 5);
    expect(await rows.count).toBe(7);
    rows.open({ page: 2, pageSize: 3, pages: 3, skip: 3, limit: 3 });
    expect(opened).toEqual([{ page: 2, pageSize: 3, pages: 3, skip: 8, limit: 3 }]);
    expect(await withoutFirst({ count: Promise.resolve(2), open: rows.open }, 5).count).toBe(0);
  });
});
