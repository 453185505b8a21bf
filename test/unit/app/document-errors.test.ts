import { describe, expect, it } from 'vitest';
import { documentApiError } from '../../../src/app/error-handler.js';
import {
  collectionExists,
  duplicateValues,
  immutableId,
  indexRefused,
  missingGeoIndex,
  noSuchCollection,
  noSuchDatabase,
  noSuchRecord,
  reservedDatabase,
  type DocumentError,
} from '../../../src/documents/errors.js';

describe("the documents layer's errors as HTTP answers", () => {
  it.each<[string, DocumentError, number, string]>([
    ['a missing database', noSuchDatabase('lab'), 404, 'no_such_database'],
    ['a missing collection', noSuchCollection('lab', 'readings'), 404, 'no_such_collection'],
    ['a missing record', noSuchRecord('42'), 404, 'no_such_record'],
    ['a collection already there', collectionExists('lab', 'readings'), 409, 'collection_exists'],
    ['duplicate values under a unique index', duplicateValues('duplicates'), 409, 'duplicate_values'],
    ['a reserved database name', reservedDatabase('cybercom'), 400, 'reserved_name'],
    ['an index the engine refused', indexRefused('cannot build'), 400, 'invalid_index'],
    ['a changed _id', immutableId(), 400, 'immutable_id'],
  ])('answers %s with its status and code', (_what, error, status, code) => {
    const api = documentApiError(error);
    expect(api.toBody()).toEqual({ error: { status, code, message: error.message } });
  });

  it('keeps the detail the layer gives', () => {
    expect(documentApiError(missingGeoIndex(['where'])).toBody().error).toMatchObject({
      status: 400,
      code: 'missing_geo_index',
      detail: { fields: ['where'] },
    });
  });

  it('is no HTTP error in the layer itself: the status is decided only here', () => {
    expect(noSuchDatabase('lab')).not.toHaveProperty('status');
  });
});
