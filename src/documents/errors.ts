/**
 * The errors of the documents layer that are about what exists and what a write may change:
 * databases, collections, records and indexes that are missing or already there, and record
 * writes and index builds refused. Each is built here once, so the same situation reads the same
 * wherever it is noticed (a read that found nothing, a write, the Indexes page).
 *
 * They are domain errors: they say what kind of situation it is (missing, conflicting, refused)
 * and carry the code and words a caller sees, not an HTTP status; the service's one error handler
 * decides the status. Malformed input is refused by the module that parses it (names, query
 * parameters, Extended JSON, field names), which answers the request directly.
 */

/** What kind of situation a DocumentError is: something missing, something in the way, or a refusal. */
export type DocumentErrorKind = 'missing' | 'conflict' | 'refused';

export class DocumentError extends Error {
  constructor(
    readonly kind: DocumentErrorKind,
    readonly code: string,
    message: string,
    readonly detail?: unknown,
  ) {
    super(message);
    this.name = 'DocumentError';
  }
}

export const noSuchDatabase = (db: string): DocumentError =>
  new DocumentError('missing', 'no_such_database', `Database "${db}" does not exist.`);

export const noSuchCollection = (db: string, col: string): DocumentError =>
  new DocumentError('missing', 'no_such_collection', `Collection "${col}" does not exist in "${db}".`);

export const noSuchRecord = (id: string): DocumentError => new DocumentError('missing', 'no_such_record', `No record with id "${id}".`);

export const databaseExists = (db: string): DocumentError =>
  new DocumentError('conflict', 'database_exists', `Database "${db}" already exists.`);

export const collectionExists = (db: string, col: string): DocumentError =>
  new DocumentError('conflict', 'collection_exists', `Collection "${col}" already exists in "${db}".`);

/** A database name the area does not own: the service's own database, or the other area's. */
export const reservedDatabase = (db: string): DocumentError =>
  new DocumentError('refused', 'reserved_name', `"${db}" is reserved and cannot be used through this API.`);

export const noSuchIndex = (name: string, col?: string): DocumentError =>
  new DocumentError(
    'missing',
    'no_such_index',
    col === undefined ? `Index "${name}" does not exist.` : `Index "${name}" does not exist on "${col}".`,
  );

export const indexExists = (message: string): DocumentError => new DocumentError('conflict', 'index_exists', message);

/** The engine refused an index definition, or cannot build it over the records there. */
export const indexRefused = (message: string): DocumentError => new DocumentError('refused', 'invalid_index', message);

/** A $near / $nearSphere on fields without a geospatial index: which index would serve it. */
export const missingGeoIndex = (fields: readonly string[]): DocumentError =>
  new DocumentError(
    'refused',
    'missing_geo_index',
    `$near and $nearSphere need a geospatial index on the field they search: create ${fields
      .map((field) => `{"keys": {${JSON.stringify(field)}: "2dsphere"}}`)
      .join(' and ')} at this collection's indexes (POST /api/<area>/indexes/<db>/<col>/).`,
    { fields },
  );

export const duplicateValues = (message: string): DocumentError => new DocumentError('conflict', 'duplicate_values', message);

/** A write that would change a record's `_id`, which is what the record is found by. */
export const immutableId = (): DocumentError => new DocumentError('refused', 'immutable_id', 'The "_id" of a record cannot be changed.');
