/**
 * Start-up upgrade of API tokens stored by earlier versions (and by the Python service), which
 * kept the key itself in `key` under a unique index. Each such token gets the hash and prefix
 * that lookups now use and loses the key, so existing scripts keep working while the database no
 * longer holds a usable key.
 *
 * Idempotent, and safe when several API processes start at once: a token is only rewritten while
 * it still holds the key it was read with, and a missing index or collection is not an error.
 * The index on `key` goes first: once keys are removed, a unique index on the absent field would
 * see every token as holding the same value (null) and refuse the second one.
 */
import { MongoServerError, type Collection, type Document } from 'mongodb';
import { storedTokenFields } from './api-tokens.js';
import { retryOnDeadlock } from '../db/deadlock-retry.js';

const NAMESPACE_NOT_FOUND = 26;
const INDEX_NOT_FOUND = 27;

const isCode = (err: unknown, ...codes: number[]): boolean => err instanceof MongoServerError && codes.includes(err.code as number);

/** Drops every index whose only field is `key` (the earlier versions' unique index). */
async function dropKeyIndexes(tokens: Collection<Document>): Promise<void> {
  let indexes: Document[];
  try {
    indexes = await tokens.listIndexes().toArray();
  } catch (err) {
    if (isCode(err, NAMESPACE_NOT_FOUND)) return;
    throw err;
  }
  for (const index of indexes) {
    const fields = Object.keys((index.key ?? {}) as Document);
    if (fields.length !== 1 || fields[0] !== 'key') continue;
    try {
      await retryOnDeadlock(() => tokens.dropIndex(index.name as string));
    } catch (err) {
      if (!isCode(err, INDEX_NOT_FOUND, NAMESPACE_NOT_FOUND)) throw err;
    }
  }
}

/** Hashes every key stored in plain text; returns how many tokens this call rewrote. */
export async function hashPlaintextTokenKeys(tokens: Collection<Document>): Promise<number> {
  await dropKeyIndexes(tokens);
  // One token per user: few enough documents to read at once, and no cursor is left open over
  // documents this loop changes.
  const legacy = await tokens.find({ key: { $type: 'string' } }, { projection: { key: 1 } }).toArray();
  let rewritten = 0;
  for (const token of legacy) {
    const key = token.key as string;
    const result = await tokens.updateOne({ _id: token._id, key }, { $set: storedTokenFields(key), $unset: { key: '' } });
    rewritten += result.modifiedCount;
  }
  return rewritten;
}
