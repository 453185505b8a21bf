import { MongoInvalidArgumentError, MongoServerError } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { classifyDatabaseError, serverMessage } from '../../../src/db/errors.js';

const serverError = (errmsg: string, code = 2) => new MongoServerError({ message: errmsg, errmsg, code });

describe('serverMessage', () => {
  it("drops FerretDB's Go source locations and keeps the reason", () => {
    const err = serverError(
      '[msg_create.go:137 handler.(*Handler).MsgCreate] [database.go:98 sqlite.(*database).CreateCollection] SQL logic error: syntax error (1)',
    );
    expect(serverMessage(err)).toBe('SQL logic error: syntax error (1)');
  });

  it("drops FerretDB v2's chains of Go call sites", () => {
    const err = serverError(
      'msg_find.go:43 (handler.(*Handler).msgFind): pool_cursors.go:132 (documentdb.(*Pool).Find): pool.go:90 (documentdb.(*Pool).Acquire): failed to connect',
    );
    expect(serverMessage(err)).toBe('failed to connect');
  });

  it('keeps MongoDB messages as they are and cuts very long ones', () => {
    expect(serverMessage(serverError('unknown operator: $foo'))).toBe('unknown operator: $foo');
    const long = serverMessage(serverError('x'.repeat(1000)));
    expect(long).toHaveLength(300);
    expect(long.endsWith('...')).toBe(true);
  });

  it('falls back to the code when nothing readable is left', () => {
    expect(serverMessage(serverError('[a.go:1 f]', 9))).toBe('error code 9');
  });
});

describe('classifyDatabaseError', () => {
  it('calls query errors invalid_query, without source locations', () => {
    const api = classifyDatabaseError(serverError('[msg_find.go:1 x] unknown operator: $foo', 2));
    expect(api?.kind).toBe('invalid_query');
    expect(api?.code).toBe('invalid_query');
    expect(api?.transient).toBe(false);
    expect(api?.message).toBe('The database refused the query: unknown operator: $foo');
  });

  it.each([
    ['InternalError: the storage under FerretDB is down', 1, 'terminating connection due to unexpected postmaster exit'],
    ["AuthenticationFailed: the service's own login while the engine restarts", 18, 'Authentication failed.'],
    ['ShutdownInProgress', 91, 'The server is shutting down'],
    ['NotWritablePrimary', 10107, 'not primary'],
  ])("calls %s unavailable (database_unavailable), not the query's fault", (_what, code, message) => {
    const api = classifyDatabaseError(serverError(message, code));
    expect(api?.kind).toBe('unavailable');
    expect(api?.transient).toBe(true);
    expect(api?.code).toBe('database_unavailable');
    expect(api?.message).not.toContain(message);
  });
});

describe('classifyDatabaseError', () => {
  it.each([
    ['PostgreSQL under FerretDB', 1, 'could not extend file "base/16384/16385": No space left on device'],
    ['PostgreSQL starting a backend on a full disk', 1, 'FATAL:  could not write init file'],
    ["MongoDB's OutOfDiskSpace", 14031, 'Out of disk space'],
  ])('calls a full disk (%s) storage full, 503 and worth retrying later', (_what, code, message) => {
    expect(classifyDatabaseError(serverError(message, code))).toMatchObject({
      kind: 'storage_full',
      code: 'database_storage_full',
      transient: true,
    });
  });

  it("calls a write to a socket the engine closed unavailable (Node's EPIPE, passed on unwrapped)", () => {
    const epipe = Object.assign(new Error('This socket has been ended by the other party'), { code: 'EPIPE' });
    expect(classifyDatabaseError(epipe)).toMatchObject({ kind: 'unavailable', code: 'database_unavailable' });
  });

  it('leaves server error codes it does not know to the logged 500 path, instead of blaming the query', () => {
    expect(classifyDatabaseError(serverError('something new went wrong', 9876))).toBeUndefined();
    expect(classifyDatabaseError(serverError('not authorized on data to execute command', 13))).toBeUndefined();
  });

  it("calls an engine assertion location (a check of the engine's parser, code 10000 and up) the query's fault", () => {
    expect(classifyDatabaseError(serverError('$addFields specification stage must be an object', 40272))).toMatchObject({
      kind: 'invalid_query',
      code: 'invalid_query',
    });
  });

  it.each([
    [
      'InternalError for an operator the local engine does not implement there (a field-level $text)',
      1,
      '$text operator is not yet implemented',
    ],
    ['IndexNotFound: a $text search without a text index', 27, 'text index required for $text query'],
    ['ConflictingUpdateOperators', 40, "Updating the path 'a' would create a conflict at 'a'"],
    ['EmptyFieldName', 56, 'An empty update path is not valid'],
    ['ConversionFailure', 241, "Failed to parse number 'x' in $convert with no onError value"],
  ])("calls %s the query's fault, not an outage or a server error", (_what, code, message) => {
    expect(classifyDatabaseError(serverError(message, code))).toMatchObject({
      kind: 'invalid_query',
      message: `The database refused the query: ${message}`,
      transient: false,
    });
  });

  it('leaves an unrelated plain error to the 500 path', () => {
    expect(classifyDatabaseError(new Error('boom'))).toBeUndefined();
  });
});

describe('classifyDatabaseError: a record past 16 MiB of BSON', () => {
  it.each([
    ['FerretDB', serverError('[msg_insert.go:1 x] Size 17588927 is larger than MaxDocumentSize 16777216', 2)],
    ["MongoDB's insert", serverError('object to insert too large. size in bytes: 17588927, max size: 16777216', 2)],
    [
      "MongoDB's BSONObjectTooLarge",
      serverError('BSONObj size: 17588927 (0x10C6A3F) is invalid. Size must be between 0 and 16793600(16MB)', 10334),
    ],
    ["MongoDB's update that grows a record", serverError('Resulting document after update is larger than 16777216', 17419)],
    ["the driver's own check of a batch", new MongoInvalidArgumentError('Document is larger than the maximum size 16777216')],
  ])('calls %s record_too_large (a 400), not a refused query', (_what, err) => {
    expect(classifyDatabaseError(err)).toMatchObject({
      kind: 'record_refused',
      code: 'record_too_large',
      transient: false,
      detail: { max_bson_bytes: 16_777_216 },
    });
  });

  it('leaves other refusals that mention a size to their own kind', () => {
    expect(classifyDatabaseError(serverError('$limit must be larger than 0', 15958))).toMatchObject({ code: 'invalid_query' });
  });
});
