/**
 * How the connected engine treats a cursor's time limit, which differs between the two engines
 * the service runs on:
 * - MongoDB counts the time of every later batch (getMore) against the limit sent with the
 *   cursor's first command, and refuses a getMore that carries a limit of its own (BadValue,
 *   "cannot set maxTimeMS on getMore command for a non-awaitData cursor").
 * - FerretDB v2 applies the first command's limit to that command only; each getMore runs
 *   unlimited unless it carries a limit itself, which it accepts and enforces.
 *
 * And how a compound index is laid out:
 * - MongoDB keeps every index as one B-tree ordered by the whole key, so an index whose key is
 *   equality fields followed by the sort fields answers a range on the first sort field by
 *   reading just that range.
 * - FerretDB v2 stores indexes in DocumentDB, which by default indexes each field of a compound
 *   key on its own: a range on a later field is then found by intersecting each field's entries
 *   (all of them for the equality fields). Asked for composite terms, DocumentDB keeps one
 *   ordered entry per document instead, like MongoDB; the option is DocumentDB's own and
 *   MongoDB refuses it, so it is only sent to FerretDB.
 *
 * FerretDB says who it is in buildInfo (a `ferretdb` field).
 */
import type { CreateIndexesOptions, MongoClient } from 'mongodb';

export interface EngineTraits {
  /** Whether each getMore must carry its own time limit to be limited at all. */
  limitsEachBatchSeparately: boolean;
  /** Options that make a compound index one index ordered by its whole key (none on MongoDB). */
  compoundIndexOptions: CreateIndexesOptions;
  /**
   * Whether many matches are counted several times faster from an index of just the fields they
   * are matched on than from a longer ordered index starting with them (DocumentDB: the short
   * index keeps one list of documents per distinct key, the ordered one an entry per document).
   */
  countsFromEqualityIndexes: boolean;
}

export async function detectEngineTraits(client: MongoClient, signal?: AbortSignal): Promise<EngineTraits> {
  const info = await client.db('admin').command({ buildInfo: 1 }, { signal });
  const ferret = info.ferretdb !== undefined;
  return {
    limitsEachBatchSeparately: ferret,
    compoundIndexOptions: ferret ? { storageEngine: { enableCompositeTerm: true } } : {},
    countsFromEqualityIndexes: ferret,
  };
}
