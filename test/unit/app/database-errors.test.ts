import { createRequire } from 'node:module';
import { MongoServerError } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { DatabaseError, classifyDatabaseError, queryTimeout, storageFull, type DatabaseErrorKind } from '../../../src/db/errors.js';
import { databaseApiError } from '../../../src/app/error-handler.js';

describe('database errors as HTTP answers', () => {
  it.each<[DatabaseErrorKind, number, string]>([
    ['unavailable', 503, 'database_unavailable'],
    ['query_timeout', 503, 'query_timeout'],
    ['storage_full', 503, 'database_storage_full'],
    ['duplicate_key', 409, 'duplicate_key'],
    ['invalid_query', 400, 'invalid_query'],
    ['record_refused', 400, 'record_refused'],
  ])('answers %s with %i and code %s', (kind, status, code) => {
    const api = databaseApiError(new DatabaseError(kind, `about ${kind}`, { n: 1 }));
    expect(api.toBody()).toEqual({ error: { status, code, message: `about ${kind}`, detail: { n: 1 } } });
  });

  it('keeps a more exact code and the detail given by the layer', () => {
    const api = databaseApiError(
      new DatabaseError('record_refused', 'The database refused record 3: too large', { failed_index: 3 }, 'insert_failed'),
    );
    expect(api.status).toBe(400);
    expect(api.code).toBe('insert_failed');
    expect(api.detail).toEqual({ failed_index: 3 });
  });

  it('builds the time-limit and full-disk errors the layers raise', () => {
    expect(databaseApiError(queryTimeout())).toMatchObject({ status: 503, code: 'query_timeout' });
    expect(databaseApiError(storageFull({ inserted_count: 2 }))).toMatchObject({
      status: 503,
      code: 'database_storage_full',
      detail: { inserted_count: 2 },
    });
  });
});

// The driver raises it but neither exports nor declares it at its entry point.
const { WaitQueueTimeoutError } = createRequire(import.meta.url)('mongodb/lib/cmap/errors.js') as {
  WaitQueueTimeoutError: new (message: string, address: string) => Error;
};

describe('driver errors sorted into kinds', () => {
  it('reads a connection that never came free from the pool as the database being unavailable', () => {
    const err = new WaitQueueTimeoutError('Timed out while checking out a connection from connection pool', 'localhost:27017');
    expect(classifyDatabaseError(err)).toMatchObject({ kind: 'unavailable', code: 'database_unavailable' });
  });
});

describe('engine codes sorted into kinds', () => {
  const serverError = (code: number, errmsg: string) => new MongoServerError({ code, errmsg, ok: 0 });

  it.each([
    [40272, '$addFields specification stage must be an object'],
    [15957, 'the limit must be specified as a number'],
    [40600, '$geoNear is not allowed to be used within a $facet stage'],
    [17053, 'the sortByCount field must be defined as a $-prefixed path'],
    [31002, 'a parse check of a stage'],
  ])('reads assertion location %i as the query being wrong', (code, errmsg) => {
    expect(classifyDatabaseError(serverError(code, errmsg))).toMatchObject({ kind: 'invalid_query' });
  });

  it.each([11000, 11600, 11601, 11602, 13388, 13435, 46841])('keeps named code %i out of the query errors', (code) => {
    expect(classifyDatabaseError(serverError(code, 'x'))?.kind).not.toBe('invalid_query');
  });
});
