/**
 * A collection read's `skip` (docs/api-behaviour.md, "Paging"): the result without its first
 * rows, which paging then divides as if they had never been there. The database leaves them out
 * (a further `$skip`/`skip()` in the window each page opens), so they are never read into the API.
 */
import type { CollectionRows } from './document-service.js';

export function skipRows(rows: CollectionRows, skip: number): CollectionRows {
  if (skip === 0) return rows;
  if ('values' in rows) return { values: rows.values.slice(skip) };
  return {
    ...rows,
    count: rows.count.then((total) => Math.max(0, total - skip)),
    open: (window) => rows.open({ skip: Math.min(window.skip + skip, Number.MAX_SAFE_INTEGER), limit: window.limit }),
  };
}
