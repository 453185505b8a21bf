/**
 * The body of `POST .../indexes/<db>/<col>/`, checked into an index definition
 * (docs/api-behaviour.md, "Indexes"): keys in order, and the few options the API offers.
 */
import type { Document } from 'mongodb';
import { z } from 'zod';
import { badRequest } from '../errors.js';
import { parseJsonBody } from './extended-json.js';
import { assertFilterOperators } from './operators.js';

export const INDEX_KEY_TYPES = [1, -1, '2dsphere', 'text', 'hashed'] as const;
export type IndexKeyType = (typeof INDEX_KEY_TYPES)[number];

export interface IndexDefinition {
  /** Field paths and their index types, in index order. */
  keys: [string, IndexKeyType][];
  name?: string;
  unique?: boolean;
  sparse?: boolean;
  expireAfterSeconds?: number;
  partialFilterExpression?: Document;
}

/** The index every collection has; it can be neither made nor dropped through the API. */
export const ID_INDEX = '_id_';

const MAX_KEYS = 32;
const MAX_NAME_LENGTH = 128;
/** The largest TTL MongoDB accepts (a 32-bit signed integer of seconds). */
const MAX_EXPIRE_SECONDS = 2_147_483_647;

const keyType = z.union([z.literal(1), z.literal(-1), z.literal('2dsphere'), z.literal('text'), z.literal('hashed')]);

const bodySchema = z
  .object({
    keys: z.union([z.record(z.string(), z.unknown()), z.array(z.unknown())]),
    name: z.string().optional(),
    unique: z.boolean().optional(),
    sparse: z.boolean().optional(),
    expireAfterSeconds: z.number().int().min(0).max(MAX_EXPIRE_SECONDS).optional(),
    partialFilterExpression: z.record(z.string(), z.unknown()).optional(),
  })
  .strict();

const invalid = (message: string) => badRequest('invalid_index', message);

/** A field path of an index key: dotted names, none empty, none an operator, no control characters. */
function checkField(field: string): void {
  if (field === '' || field.split('.').some((part) => part === '' || part.startsWith('$')) || /[\u0000-\u001f\u007f]/.test(field)) {
    throw invalid(`${JSON.stringify(field)} is not a field path an index can use.`);
  }
}

function checkKeyType(field: string, value: unknown): IndexKeyType {
  const parsed = keyType.safeParse(value);
  if (!parsed.success) {
    throw invalid(`The index type of "${field}" must be 1, -1, "2dsphere", "text" or "hashed"; got ${JSON.stringify(value) ?? 'nothing'}.`);
  }
  return parsed.data;
}

/** Keys as an object (`{"a": 1}`) or, to keep an order any client can express, a list of pairs (`[["a", 1]]`). */
function parseKeys(raw: Record<string, unknown> | unknown[]): [string, IndexKeyType][] {
  const pairs: [string, unknown][] = Array.isArray(raw)
    ? raw.map((pair) => {
        if (!Array.isArray(pair) || pair.length !== 2 || typeof pair[0] !== 'string') {
          throw invalid('Each entry of a "keys" list must be a pair: ["field", type].');
        }
        return [pair[0], pair[1]];
      })
    : Object.entries(raw);
  if (pairs.length === 0) throw invalid('"keys" must name at least one field.');
  if (pairs.length > MAX_KEYS) throw invalid(`An index has at most ${MAX_KEYS} keys.`);
  const seen = new Set<string>();
  return pairs.map(([field, value]) => {
    checkField(field);
    if (seen.has(field)) throw invalid(`The field "${field}" is given twice.`);
    seen.add(field);
    return [field, checkKeyType(field, value)];
  });
}

function checkName(name: string): void {
  if (name === '' || name.length > MAX_NAME_LENGTH || /[\u0000-\u001f\u007f]/.test(name)) {
    throw invalid(`An index name has 1 to ${MAX_NAME_LENGTH} characters and no control characters.`);
  }
  // "*" means "every index" to the dropIndexes command: an index of that name could never be dropped alone.
  if (name === ID_INDEX || name === '*') throw invalid(`"${name}" cannot be used as an index name.`);
}

export function parseIndexDefinition(body: unknown): IndexDefinition {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw badRequest('invalid_body', 'The request body must be a JSON object.');
  const parsed = bodySchema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.join('.') ?? '';
    throw invalid(
      issue?.code === 'unrecognized_keys'
        ? `Unknown field(s): ${issue.keys.join(', ')}. Allowed: keys, name, unique, sparse, expireAfterSeconds, partialFilterExpression.`
        : `"${where}": ${issue?.message ?? 'invalid value'}.`,
    );
  }
  const { keys: rawKeys, name, unique, sparse, expireAfterSeconds, partialFilterExpression } = parsed.data;
  const keys = parseKeys(rawKeys);
  if (name !== undefined) checkName(name);
  if (expireAfterSeconds !== undefined && (keys.length !== 1 || typeof keys[0]?.[1] !== 'number')) {
    throw invalid('"expireAfterSeconds" needs an index on a single field with type 1 or -1 (the field holding a date).');
  }
  if (unique === true && keys.some(([, type]) => type === 'text' || type === '2dsphere' || type === 'hashed')) {
    throw invalid('Only indexes of type 1 or -1 can be unique.');
  }
  const definition: IndexDefinition = { keys };
  if (name !== undefined) definition.name = name;
  if (unique !== undefined) definition.unique = unique;
  if (sparse !== undefined) definition.sparse = sparse;
  if (expireAfterSeconds !== undefined) definition.expireAfterSeconds = expireAfterSeconds;
  if (partialFilterExpression !== undefined) {
    // The rules of a filter in a query by the same caller: a partial index's filter is one.
    const filter = parseJsonBody(partialFilterExpression) as Document;
    assertFilterOperators(filter, 'partialFilterExpression');
    definition.partialFilterExpression = filter;
  }
  return definition;
}

/** What the API shows of an index, as the engine lists it. */
export function describeIndex(index: Document): Document {
  const out: Document = { name: index.name, key: index.key };
  for (const option of ['unique', 'expireAfterSeconds', 'sparse', 'partialFilterExpression'] as const) {
    if (index[option] !== undefined && index[option] !== false) out[option] = index[option];
  }
  return out;
}
