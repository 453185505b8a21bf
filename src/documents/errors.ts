/**
 * The errors of the documents layer that are about what exists and what a write may change:
 * databases, collections, records and indexes that are missing or already there, and record
 * writes refused. Each is built here once, so the same situation reads the same wherever it is
 * noticed (a read that found nothing, a write, the Indexes page). Malformed input is refused by
 * the module that parses it (names, query parameters, Extended JSON, field names).
 */
import { badRequest, conflict, notFound, type ApiError } from '../errors.js';

export const noSuchDatabase = (db: string): ApiError => notFound(`Database "${db}" does not exist.`, 'no_such_database');

export const noSuchCollection = (db: string, col: string): ApiError =>
  notFound(`Collection "${col}" does not exist in "${db}".`, 'no_such_collection');

export const noSuchRecord = (id: string): ApiError => notFound(`No record with id "${id}".`, 'no_such_record');

export const databaseExists = (db: string): ApiError => conflict(`Database "${db}" already exists.`, 'database_exists');

export const collectionExists = (db: string, col: string): ApiError =>
  conflict(`Collection "${col}" already exists in "${db}".`, 'collection_exists');

/** A database name the area does not own: the service's own database, or the other area's. */
export const reservedDatabase = (db: string): ApiError =>
  badRequest('reserved_name', `"${db}" is reserved and cannot be used through this API.`);

export const noSuchIndex = (name: string, col?: string): ApiError =>
  notFound(col === undefined ? `Index "${name}" does not exist.` : `Index "${name}" does not exist on "${col}".`, 'no_such_index');

export const indexExists = (message: string): ApiError => conflict(message, 'index_exists');

/** A $near / $nearSphere on fields without a geospatial index: which index would serve it. */
export const missingGeoIndex = (fields: readonly string[]): ApiError =>
  badRequest(
    'missing_geo_index',
    `$near and $nearSphere need a geospatial index on the field they search: create ${fields
      .map((field) => `{"keys": {${JSON.stringify(field)}: "2dsphere"}}`)
      .join(' and ')} at this collection's indexes (POST /api/<area>/indexes/<db>/<col>/).`,
    { fields },
  );

export const duplicateValues = (message: string): ApiError => conflict(message, 'duplicate_values');

/** A write that would change a record's `_id`, which is what the record is found by. */
export const immutableId = (): ApiError => badRequest('immutable_id', 'The "_id" of a record cannot be changed.');
