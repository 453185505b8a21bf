/**
 * What a signed link may be made for: reads of records, nothing else. A link hands the caller's
 * rights to whoever holds its URL, and its holder needs no password, so it must never reach an
 * endpoint that hands out credentials (`/api/user/` creates an API token for a user who has none),
 * changes anything, or administers: only the record reads of the data store and the catalog —
 * databases, collections, queries, `distinct`, aggregation reads, single records, and their CSV and
 * NDJSON exports — are allowed. Every GET under these two prefixes is a read.
 */
import { canonicalPathAndQuery } from './link-path.js';
import { recordsPath, urls, type DocumentArea } from '../http/urls.js';

const READABLE_PREFIXES = [urls.records('data_store'), urls.records('catalog')] as const;

/** A short list for messages: where links may point. */
export const LINKABLE_DESCRIPTION = READABLE_PREFIXES.map((prefix) => `${prefix}...`).join(' or ');

/**
 * Whether a link may be made for, or used on, this path and query. Compared in canonical spelling
 * and with case, so no other encoding of a path can pass for an allowed one.
 */
export function isLinkable(pathAndQuery: string): boolean {
  const canonical = canonicalPathAndQuery(pathAndQuery);
  return READABLE_PREFIXES.some((prefix) => canonical.startsWith(prefix));
}

/** The collection a linkable path reads (its database and collection segments, decoded), if it names one. */
export interface LinkTarget {
  area: DocumentArea;
  db: string;
  col: string;
}

/**
 * What a link for this path reads: the collection for a path below one (its records, a record, an
 * export), undefined for the lists of databases and collections, which show each caller only
 * what they may see anyway.
 */
export function linkTarget(pathAndQuery: string): LinkTarget | undefined {
  const target = recordsPath(canonicalPathAndQuery(pathAndQuery));
  if (target === null) return undefined;
  const [db, col] = target.rest.split('?', 1)[0]?.split('/') ?? [];
  if (db === undefined || col === undefined || db === '' || col === '') return undefined;
  return { area: target.area, db: decodeURIComponent(db), col: decodeURIComponent(col) };
}
