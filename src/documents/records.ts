/** Writing records and reading, replacing, merging or deleting one record by its id. */
import type { Request, Response } from 'express';
import type { Collection, Document, FindOneOptions } from 'mongodb';
import { badRequest, notFound } from '../errors.js';
import { respond } from '../http/respond.js';
import type { DocumentArea } from './area.js';
import { insertBatch } from './batch-insert.js';
import { parseJsonBody } from './extended-json.js';
import { assertNoForbiddenOperators } from './operators.js';
import { assertStorableFieldName, assertStorableFieldNames } from './field-names.js';
import { assertStorableRecord } from './record-rules.js';
import { recordIdCandidates, validateRecordId } from './query-params.js';

/** Update operators accepted in PATCH bodies (everything that cannot run code or move data out). */
const PATCH_OPERATORS = new Set([
  '$set',
  '$unset',
  '$inc',
  '$mul',
  '$min',
  '$max',
  '$rename',
  '$currentDate',
  '$push',
  '$pull',
  '$pullAll',
  '$addToSet',
  '$pop',
]);

function requireBody(req: Request): unknown {
  if (req.body === undefined) throw badRequest('missing_body', 'A JSON body is required.');
  return parseJsonBody(req.body);
}

/**
 * Throws the 404 of a missing collection or database. Reads (collection views, the record routes)
 * call it only after finding nothing, since anything found proves the collection exists.
 */
export type WhenEmpty = () => Promise<void>;

/** The record found, or the right 404: no such collection/database, else no such record. */
async function found<T>(doc: T | null, id: string, whenEmpty: WhenEmpty): Promise<T> {
  if (doc !== null) return doc;
  await whenEmpty();
  throw notFound(`No record with id "${id}".`, 'no_such_record');
}

/**
 * The record a URL id names: one `_id` equality per candidate type, in order (the ObjectId for 24
 * hex digits, then the string), so each lookup is a point query on the `_id` index. A `$in` over
 * both types would be one query, but engines such as FerretDB/DocumentDB plan it as a scan.
 */
async function findById(collection: Collection, id: string, options?: FindOneOptions): Promise<Document | null> {
  for (const candidate of recordIdCandidates(validateRecordId(id))) {
    const filter: Document = { _id: candidate };
    const doc = await collection.findOne(filter, options);
    if (doc !== null) return doc;
  }
  return null;
}

export function recordHandlers(area: DocumentArea) {
  const { store } = area;

  return {
    async insert(req: Request, res: Response, db: string, col: string): Promise<void> {
      const body = requireBody(req);
      const collection = store.collection(db, col);
      if (Array.isArray(body)) {
        if (body.length === 0) throw badRequest('empty_array', 'The array of records is empty.');
        const docs = body.map((d, i) => assertStorableRecord(d, `Record ${i}`));
        respond(req, res, 201, { inserted_ids: await insertBatch(collection, docs) });
        return;
      }
      const doc = assertStorableRecord(body, 'The record');
      const result = await collection.insertOne(doc);
      respond(req, res, 201, { _id: result.insertedId });
    },

    async read(req: Request, res: Response, db: string, col: string, id: string, whenEmpty: WhenEmpty): Promise<void> {
      const doc = await found(await findById(store.collection(db, col), id), id, whenEmpty);
      respond(req, res, 200, doc);
    },

    async replace(req: Request, res: Response, db: string, col: string, id: string, whenEmpty: WhenEmpty): Promise<void> {
      const doc = assertStorableRecord(requireBody(req), 'The record');
      const collection = store.collection(db, col);
      const existing = await found(await findById(collection, id, { projection: { _id: 1 } }), id, whenEmpty);
      if ('_id' in doc && String(doc._id) !== String(existing._id)) {
        throw badRequest('id_mismatch', 'The body\'s "_id" differs from the record id in the URL; _id cannot be changed.');
      }
      const { _id: _ignored, ...replacement } = doc;
      await collection.replaceOne({ _id: existing._id }, replacement);
      respond(req, res, 200, { _id: existing._id, ...replacement });
    },

    async merge(req: Request, res: Response, db: string, col: string, id: string, whenEmpty: WhenEmpty): Promise<void> {
      const body = requireBody(req);
      if (typeof body !== 'object' || body === null || Array.isArray(body))
        throw badRequest('invalid_body', 'The body must be a JSON object.');
      const keys = Object.keys(body);
      if (keys.length === 0) throw badRequest('empty_update', 'The body has no fields to change.');
      const operatorKeys = keys.filter((k) => k.startsWith('$'));
      let update: Document;
      if (operatorKeys.length === 0) {
        assertStorableRecord(body, 'The body');
        if ('_id' in body) throw badRequest('immutable_id', 'The "_id" of a record cannot be changed.');
        update = { $set: body };
      } else {
        if (operatorKeys.length !== keys.length) {
          throw badRequest('mixed_update', 'Use either plain fields (merged with $set) or update operators, not both.');
        }
        for (const op of operatorKeys) {
          if (!PATCH_OPERATORS.has(op)) throw badRequest('forbidden_operator', `Update operator "${op}" is not allowed.`, { operator: op });
          const arg = (body as Document)[op];
          if (typeof arg !== 'object' || arg === null || Array.isArray(arg))
            throw badRequest('invalid_update', `The argument of "${op}" must be an object.`);
          if (Object.keys(arg).some((f) => f === '_id' || f.startsWith('_id.')))
            throw badRequest('immutable_id', 'The "_id" of a record cannot be changed.');
          for (const [field, value] of Object.entries(arg as Document)) {
            assertStorableFieldName(field);
            if (op === '$rename' && typeof value === 'string') assertStorableFieldName(value);
            else assertStorableFieldNames(value, field);
          }
        }
        assertNoForbiddenOperators(body, 'the update');
        update = body as Document;
      }
      const collection = store.collection(db, col);
      const existing = await found(await findById(collection, id, { projection: { _id: 1 } }), id, whenEmpty);
      await collection.updateOne({ _id: existing._id }, update);
      const updated = await collection.findOne({ _id: existing._id });
      respond(req, res, 200, updated);
    },

    async remove(req: Request, res: Response, db: string, col: string, id: string, whenEmpty: WhenEmpty): Promise<void> {
      const collection = store.collection(db, col);
      const existing = await found(await findById(collection, id, { projection: { _id: 1 } }), id, whenEmpty);
      await collection.deleteOne({ _id: existing._id });
      respond(req, res, 200, { deleted: existing._id });
    },
  };
}
