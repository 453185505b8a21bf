/**
 * The document API of one area, declared once: the router (routes.ts) serves these paths and
 * the app's route table mounts them at /api/data_store/data and /api/catalog/data.
 *   /                 GET databases · POST create/delete database (data store only)
 *   /:db/             GET collections · POST create/delete collection
 *   /:db/:col/        GET query/distinct/aggregate · POST insert · PATCH/DELETE every record a filter matches
 *   /:db/:col/:id/    GET · PUT · PATCH · DELETE
 */
import type { BodyParser } from '../http/body.js';
import { COMMON, ENVELOPE_REF, ERRORS, PAGING, jsonBody, ok, param } from '../http/openapi-parts.js';
import { route, type RouteDecl } from '../http/route-table.js';
import type { AreaName } from '../auth/permissions.js';
import { parseRecordJson } from './number-literals.js';

/** Record bodies keep how their numbers were written (`3.0` stays a double, number-literals.ts). */
const RECORD_JSON: BodyParser = { name: 'record-json', parse: parseRecordJson };

const LABEL: Record<AreaName, string> = { data_store: 'data store', catalog: 'catalog' };

const containerBody = (field: string) =>
  jsonBody({
    type: 'object',
    required: [field],
    additionalProperties: false,
    properties: { [field]: { type: 'string' }, action: { enum: ['delete'] } },
  });

/** The filter of an update or delete by filter: required, so that no request means "every record" by leaving it out. */
const WRITE_FILTER = {
  ...param('query', 'JSON object {"filter": ...} ({"filter": {}} for every record); MongoDB Extended JSON accepted'),
  required: true,
};

export interface DocumentRoutes {
  databases: RouteDecl;
  database: RouteDecl;
  collection: RouteDecl;
  record: RouteDecl;
}

export function documentRoutes(area: { name: AreaName; canCreateDatabases: boolean }): DocumentRoutes {
  const tags = [LABEL[area.name]];
  return {
    databases: route(
      '/',
      {
        GET: {
          tags,
          summary: `List ${LABEL[area.name]} databases`,
          parameters: [...COMMON, ...PAGING],
          responses: { 200: ok('Envelope of databases', ENVELOPE_REF), ...ERRORS },
        },
        ...(area.canCreateDatabases
          ? {
              POST: {
                tags,
                summary: 'Create (or with action=delete, delete) a database',
                parameters: COMMON,
                request: containerBody('database'),
                responses: { 200: ok('Deleted'), 201: ok('Created'), 409: ok('Exists'), ...ERRORS },
              },
            }
          : {}),
      },
      undefined,
      RECORD_JSON,
    ),
    database: route(
      '/:db/',
      {
        GET: {
          tags,
          summary: 'List collections',
          parameters: [...COMMON, ...PAGING],
          responses: { 200: ok('Envelope of collections', ENVELOPE_REF), ...ERRORS },
        },
        POST: {
          tags,
          summary: 'Create (or with action=delete, delete) a collection',
          parameters: COMMON,
          request: containerBody('collection'),
          responses: { 200: ok('Deleted'), 201: ok('Created'), 409: ok('Exists'), ...ERRORS },
        },
      },
      undefined,
      RECORD_JSON,
    ),
    collection: route(
      '/:db/:col/',
      {
        GET: {
          tags,
          summary: 'Query records (filter/projection/sort), distinct values, or an aggregation pipeline',
          description:
            'With format=csv or format=ndjson the records alone are answered (no envelope), the whole result unless page or page_size is given.',
          parameters: [
            ...COMMON,
            ...PAGING,
            param('skip', 'Leave out this many leading records of the result before paging (default 0)', { type: 'integer', minimum: 0 }),
            param('fields', 'format=csv only: comma-separated columns (dotted paths), in order'),
            param('query', 'JSON object with keys filter, projection (0/1), sort (1/-1); MongoDB Extended JSON accepted'),
            param('distinct', 'Comma-separated field names'),
            param('aggregate', 'JSON array of pipeline stages ($out, $merge, $where, $function, $accumulator refused)'),
          ],
          responses: {
            200: {
              description: 'Envelope of records; or the records as CSV or NDJSON',
              content: {
                'application/json': { schema: ENVELOPE_REF },
                'text/csv': { schema: { type: 'string' } },
                'application/x-ndjson': { schema: { type: 'string' } },
              },
            },
            414: ok('Query parameter too long'),
            ...ERRORS,
          },
        },
        POST: {
          tags,
          summary: 'Insert one record (object) or many (array)',
          parameters: [
            ...COMMON,
            param(
              'answer',
              'ids (default): {_id} or {inserted_ids}; count: {inserted_count} alone, for an array whose ids the caller already has',
              {
                enum: ['ids', 'count'],
              },
            ),
          ],
          request: jsonBody({ oneOf: [{ type: 'object' }, { type: 'array', items: { type: 'object' } }] }),
          responses: {
            201: ok('Inserted: {_id} or {inserted_ids}; with answer=count, {inserted_count}'),
            409: ok('Duplicate _id'),
            ...ERRORS,
          },
        },
        PATCH: {
          tags,
          summary: 'Update every record the filter of query matches: merge fields ($set) or apply update operators',
          parameters: [...COMMON, WRITE_FILTER],
          request: jsonBody({ type: 'object' }),
          responses: { 200: ok('{matched_count, modified_count}'), ...ERRORS },
        },
        DELETE: {
          tags,
          summary: 'Delete every record the filter of query matches',
          parameters: [...COMMON, WRITE_FILTER],
          responses: { 200: ok('{deleted_count}'), ...ERRORS },
        },
      },
      undefined,
      RECORD_JSON,
    ),
    record: route(
      '/:db/:col/:id/',
      {
        GET: { tags, summary: 'Read one record', parameters: COMMON, responses: { 200: ok('The record'), ...ERRORS } },
        PUT: {
          tags,
          summary: 'Replace a record (its _id is kept)',
          parameters: COMMON,
          request: jsonBody({ type: 'object' }),
          responses: { 200: ok('The new record'), ...ERRORS },
        },
        PATCH: {
          tags,
          summary: 'Merge fields ($set) or apply update operators',
          parameters: COMMON,
          request: jsonBody({ type: 'object' }),
          responses: { 200: ok('The updated record'), ...ERRORS },
        },
        DELETE: { tags, summary: 'Delete a record', parameters: COMMON, responses: { 200: ok('{deleted: id}'), ...ERRORS } },
      },
      undefined,
      RECORD_JSON,
    ),
  };
}

const INDEX_KEYS = {
  description: 'Fields and their index types (1, -1, "2dsphere", "text", "hashed"), as an object or, to fix the order, a list of pairs',
  oneOf: [{ type: 'object' }, { type: 'array', items: { type: 'array', minItems: 2, maxItems: 2 } }],
};

export interface IndexRoutes {
  indexes: RouteDecl;
  index: RouteDecl;
}

/** The indexes of a collection (index-routes.ts), mounted at /api/data_store/indexes and /api/catalog/indexes. */
export function indexRoutes(area: AreaName): IndexRoutes {
  const tags = [LABEL[area]];
  return {
    indexes: route('/:db/:col/', {
      GET: { tags, summary: 'The indexes of a collection', parameters: COMMON, responses: { 200: ok('{indexes: [...]}'), ...ERRORS } },
      POST: {
        tags,
        summary: 'Create an index (answers when it exists; other requests go on meanwhile)',
        parameters: COMMON,
        request: jsonBody({
          type: 'object',
          required: ['keys'],
          additionalProperties: false,
          properties: {
            keys: INDEX_KEYS,
            name: { type: 'string' },
            unique: { type: 'boolean' },
            sparse: { type: 'boolean' },
            expireAfterSeconds: { type: 'integer', minimum: 0 },
            partialFilterExpression: { type: 'object' },
          },
        }),
        responses: { 201: ok('{name}'), 409: ok('Index exists, or duplicate values for a unique index'), ...ERRORS },
      },
    }),
    index: route('/:db/:col/:name/', {
      DELETE: { tags, summary: 'Drop an index (not _id_)', parameters: COMMON, responses: { 200: ok('{deleted: name}'), ...ERRORS } },
    }),
  };
}
