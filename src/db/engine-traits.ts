/**
 * How the connected engine treats a cursor's time limit, which differs between the two engines
 * the service runs on:
 * - MongoDB counts the time of every later batch (getMore) against the limit sent with the
 *   cursor's first command, and refuses a getMore that carries a limit of its own (BadValue,
 *   "cannot set maxTimeMS on getMore command for a non-awaitData cursor").
 * - FerretDB v2 applies the first command's limit to that command only; each getMore runs
 *   unlimited unless it carries a limit itself, which it accepts and enforces.
 * FerretDB says who it is in buildInfo (a `ferretdb` field).
 */
import type { MongoClient } from 'mongodb';

export interface EngineTraits {
  /** Whether each getMore must carry its own time limit to be limited at all. */
  limitsEachBatchSeparately: boolean;
}

export async function detectEngineTraits(client: MongoClient): Promise<EngineTraits> {
  const info = await client.db('admin').command({ buildInfo: 1 });
  return { limitsEachBatchSeparately: info.ferretdb !== undefined };
}
