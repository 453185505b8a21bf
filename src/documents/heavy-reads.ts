/**
 * Which collection reads are heavy, i.e. cost work in proportion to the collection rather than
 * to the page returned, and so are capped per caller (heavy-queries.ts):
 * - every `aggregate` and every `distinct`: they group or sort whatever they are given;
 * - a listing whose filter evaluates an expression or a pattern on every record (`$expr`,
 *   `$regex` or a regular expression value, `$text`, `$jsonSchema`): the engine cannot answer
 *   these from an index, so the count alone reads the whole collection.
 * Listings with plain comparisons (equality, ranges, `$in`, ...) are light even when no index
 * helps them: they are what scripts page through in parallel, and the time limit bounds them.
 */
import type { Document } from 'mongodb';
import isPlainObject from 'is-plain-obj';

const SCANNING_OPERATORS = new Set(['$expr', '$regex', '$text', '$jsonSchema']);

/** A regular expression value: a JavaScript RegExp or the driver's BSONRegExp. */
const isRegExpValue = (v: unknown): boolean =>
  v instanceof RegExp || (typeof v === 'object' && v !== null && (v as { _bsontype?: unknown })._bsontype === 'BSONRegExp');

export function filterScansEveryRecord(filter: Document): boolean {
  // Iterative: the filter is user input and may be deeply nested.
  const stack: unknown[] = [filter];
  while (stack.length > 0) {
    const current = stack.pop();
    if (isRegExpValue(current)) return true;
    if (Array.isArray(current)) {
      for (const item of current) stack.push(item);
    } else if (isPlainObject(current)) {
      for (const [key, child] of Object.entries(current)) {
        if (SCANNING_OPERATORS.has(key)) return true;
        stack.push(child);
      }
    }
  }
  return false;
}

export interface CollectionRead {
  pipeline: Document[] | undefined;
  distinctFields: string[] | undefined;
  filter: Document;
}

export function isHeavyRead(read: CollectionRead): boolean {
  return read.pipeline !== undefined || read.distinctFields !== undefined || filterScansEveryRecord(read.filter);
}
