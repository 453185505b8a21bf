/**
 * GET /api/schema/ — an OpenAPI 3.1 description of the API, written by hand (the shared rules are
 * in docs/api-behaviour.md) so clients (and schemathesis-style fuzzers) can discover every endpoint and parameter.
 */
import { Router } from 'express';
import { requestBaseUrl } from '../http/base-url.js';

const errorBody = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['status', 'code', 'message'],
      properties: { status: { type: 'integer' }, code: { type: 'string' }, message: { type: 'string' }, detail: {} },
    },
  },
};

const envelope = {
  type: 'object',
  required: ['count', 'meta', 'next', 'previous', 'results'],
  properties: {
    count: { type: 'integer', description: 'Total number of matching records (not the page length).' },
    meta: {
      type: 'object',
      properties: { page: { type: 'integer' }, page_size: { type: 'integer' }, pages: { type: 'integer' } },
    },
    next: { type: ['string', 'null'], format: 'uri' },
    previous: { type: ['string', 'null'], format: 'uri' },
    results: { type: 'array', items: {} },
  },
};

const p = (name: string, description: string, schema: object = { type: 'string' }) => ({
  name,
  in: 'query',
  required: false,
  description,
  schema,
});
const path = (name: string) => ({ name, in: 'path', required: true, schema: { type: 'string' } });
const errors = Object.fromEntries(
  [
    ['400', 'Bad input'],
    ['401', 'Not authenticated'],
    ['403', 'Not permitted or CSRF failure'],
    ['404', 'No such database, collection or record'],
    ['413', 'Body too large'],
    ['415', 'Body is not JSON'],
    ['503', 'Database or broker unavailable'],
  ].map(([code, description]) => [
    code,
    { description, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
  ]),
);
const common = [
  p('format', 'Output format (csv and ndjson: the records only; also as a /.csv or /.ndjson path suffix)', {
    enum: ['api', 'json', 'jsonp', 'xml', 'csv', 'ndjson'],
  }),
  p('callback', 'JSONP callback name'),
];
const paging = [
  p('page', 'Page number (default 1; beyond the last → last page)', { type: 'integer' }),
  p('page_size', 'Records per page (default 10; 0 = all, streamed)', { type: 'integer', minimum: 0 }),
];
/** The filter of an update or delete by filter: required, so that no request means "every record" by leaving it out. */
const writeFilter = {
  ...p('query', 'JSON object {"filter": ...} ({"filter": {}} for every record); MongoDB Extended JSON accepted'),
  required: true,
};
const ok = (description: string, schema: object = { type: 'object' }) => ({ description, content: { 'application/json': { schema } } });
const jsonBody = (schema: object) => ({ required: true, content: { 'application/json': { schema } } });

function documentPaths(prefix: string, area: string, canCreateDatabases: boolean): Record<string, object> {
  const containerBody = (field: string) => ({
    type: 'object',
    required: [field],
    additionalProperties: false,
    properties: { [field]: { type: 'string' }, action: { enum: ['delete'] } },
  });
  return {
    [`${prefix}/`]: {
      get: {
        tags: [area],
        summary: `List ${area} databases`,
        parameters: [...common, ...paging],
        responses: { 200: ok('Envelope of databases', { $ref: '#/components/schemas/Envelope' }), ...errors },
      },
      ...(canCreateDatabases
        ? {
            post: {
              tags: [area],
              summary: 'Create (or with action=delete, delete) a database',
              requestBody: jsonBody(containerBody('database')),
              responses: { 200: ok('Deleted'), 201: ok('Created'), 409: ok('Exists'), ...errors },
            },
          }
        : {}),
    },
    [`${prefix}/{database}/`]: {
      parameters: [path('database')],
      get: {
        tags: [area],
        summary: 'List collections',
        parameters: [...common, ...paging],
        responses: { 200: ok('Envelope of collections', { $ref: '#/components/schemas/Envelope' }), ...errors },
      },
      post: {
        tags: [area],
        summary: 'Create (or with action=delete, delete) a collection',
        requestBody: jsonBody(containerBody('collection')),
        responses: { 200: ok('Deleted'), 201: ok('Created'), 409: ok('Exists'), ...errors },
      },
    },
    [`${prefix}/{database}/{collection}/`]: {
      parameters: [path('database'), path('collection')],
      get: {
        tags: [area],
        summary: 'Query records (filter/projection/sort), distinct values, or an aggregation pipeline',
        description:
          'With format=csv or format=ndjson the records alone are answered (no envelope), the whole result unless page or page_size is given.',
        parameters: [
          ...common,
          ...paging,
          p('skip', 'Leave out this many leading records of the result before paging (default 0)', { type: 'integer', minimum: 0 }),
          p('fields', 'format=csv only: comma-separated columns (dotted paths), in order'),
          p('query', 'JSON object with keys filter, projection (0/1), sort (1/-1); MongoDB Extended JSON accepted'),
          p('distinct', 'Comma-separated field names'),
          p('aggregate', 'JSON array of pipeline stages ($out, $merge, $where, $function, $accumulator refused)'),
        ],
        responses: {
          200: {
            description: 'Envelope of records; or the records as CSV or NDJSON',
            content: {
              'application/json': { schema: { $ref: '#/components/schemas/Envelope' } },
              'text/csv': { schema: { type: 'string' } },
              'application/x-ndjson': { schema: { type: 'string' } },
            },
          },
          414: ok('Query parameter too long'),
          ...errors,
        },
      },
      post: {
        tags: [area],
        summary: 'Insert one record (object) or many (array)',
        requestBody: jsonBody({ oneOf: [{ type: 'object' }, { type: 'array', items: { type: 'object' } }] }),
        responses: { 201: ok('Inserted: {_id} or {inserted_ids}'), 409: ok('Duplicate _id'), ...errors },
      },
      patch: {
        tags: [area],
        summary: 'Update every record the filter of query matches: merge fields ($set) or apply update operators',
        parameters: [...common, writeFilter],
        requestBody: jsonBody({ type: 'object' }),
        responses: { 200: ok('{matched_count, modified_count}'), ...errors },
      },
      delete: {
        tags: [area],
        summary: 'Delete every record the filter of query matches',
        parameters: [...common, writeFilter],
        responses: { 200: ok('{deleted_count}'), ...errors },
      },
    },
    [`${prefix}/{database}/{collection}/{id}/`]: {
      parameters: [path('database'), path('collection'), path('id')],
      get: { tags: [area], summary: 'Read one record', parameters: common, responses: { 200: ok('The record'), ...errors } },
      put: {
        tags: [area],
        summary: 'Replace a record (its _id is kept)',
        requestBody: jsonBody({ type: 'object' }),
        responses: { 200: ok('The new record'), ...errors },
      },
      patch: {
        tags: [area],
        summary: 'Merge fields ($set) or apply update operators',
        requestBody: jsonBody({ type: 'object' }),
        responses: { 200: ok('The updated record'), ...errors },
      },
      delete: { tags: [area], summary: 'Delete a record', responses: { 200: ok('{deleted: id}'), ...errors } },
    },
  };
}

const indexKeys = {
  description: 'Fields and their index types (1, -1, "2dsphere", "text", "hashed"), as an object or, to fix the order, a list of pairs',
  oneOf: [{ type: 'object' }, { type: 'array', items: { type: 'array', minItems: 2, maxItems: 2 } }],
};

function indexPaths(prefix: string, area: string): Record<string, object> {
  return {
    [`${prefix}/{database}/{collection}/`]: {
      parameters: [path('database'), path('collection')],
      get: {
        tags: [area],
        summary: 'The indexes of a collection',
        parameters: common,
        responses: { 200: ok('{indexes: [...]}'), ...errors },
      },
      post: {
        tags: [area],
        summary: 'Create an index (answers when it exists; other requests go on meanwhile)',
        requestBody: jsonBody({
          type: 'object',
          required: ['keys'],
          additionalProperties: false,
          properties: {
            keys: indexKeys,
            name: { type: 'string' },
            unique: { type: 'boolean' },
            sparse: { type: 'boolean' },
            expireAfterSeconds: { type: 'integer', minimum: 0 },
            partialFilterExpression: { type: 'object' },
          },
        }),
        responses: { 201: ok('{name}'), 409: ok('Index exists, or duplicate values for a unique index'), ...errors },
      },
    },
    [`${prefix}/{database}/{collection}/{name}/`]: {
      parameters: [path('database'), path('collection'), path('name')],
      delete: { tags: [area], summary: 'Drop an index (not _id_)', responses: { 200: ok('{deleted: name}'), ...errors } },
    },
  };
}

export function openApiDocument(serverUrl: string): object {
  return {
    openapi: '3.1.0',
    info: { title: 'cybercom-ts API', version: '1', description: 'Catalog, data store and task queue. See README.md.' },
    servers: [{ url: serverUrl }],
    components: {
      schemas: { Error: errorBody, Envelope: envelope },
      securitySchemes: {
        token: { type: 'apiKey', in: 'header', name: 'Authorization', description: 'Token <key>' },
        jwt: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
        session: { type: 'apiKey', in: 'cookie', name: 'sessionid' },
      },
    },
    security: [{ token: [] }, { jwt: [] }, { session: [] }, {}],
    paths: {
      '/api/': { get: { summary: 'Links to every part of the API', responses: { 200: ok('Links') } } },
      '/api/health/': {
        get: {
          summary: 'Database and broker reachability, and whether the database can store anything',
          responses: { 200: ok('Healthy'), 503: ok('Unavailable, or degraded (the database answers but its storage is full)') },
        },
      },
      '/api/client/python/': {
        get: {
          tags: ['client'],
          security: [{}],
          summary: 'The Python client: current wheel URL, version, SHA-256 and install line (404 client_not_built before it is built)',
          responses: { 200: ok('Wheel description'), 404: ok('Not built on this server') },
        },
      },
      '/api/client/python/{wheel}': {
        get: {
          tags: ['client'],
          security: [{}],
          summary: 'The wheel file (application/zip); /api/client/python/simple/ is a PEP 503 index of it',
          parameters: [{ name: 'wheel', in: 'path', required: true, schema: { type: 'string' } }],
          responses: { 200: { description: 'The wheel', content: { 'application/zip': {} } }, 404: ok('No such file') },
        },
      },
      ...documentPaths('/api/data_store/data', 'data store', true),
      ...documentPaths('/api/catalog/data', 'catalog', false),
      ...indexPaths('/api/data_store/indexes', 'data store'),
      ...indexPaths('/api/catalog/indexes', 'catalog'),
      '/api/links/': {
        post: {
          summary:
            "A signed link: one GET of the given record read (under /api/data_store/data/ or /api/catalog/data/), as the caller, until it expires or the caller's password or API token changes (for programs without credentials)",
          requestBody: jsonBody({
            type: 'object',
            required: ['path'],
            additionalProperties: false,
            properties: { path: { type: 'string' }, expires_in: { type: 'integer', minimum: 1, maximum: 86400, default: 3600 } },
          }),
          responses: { 201: ok('{url, expires}'), ...errors },
        },
      },
      '/api/queue/': {
        get: {
          tags: ['queue'],
          summary: 'Tasks offered by live workers (name, docstring, queues, run URL) and the live queues',
          parameters: [...common, ...paging, p('refresh', 'Task admins: refresh the cached list now', { enum: ['true'] })],
          responses: { 200: ok('Envelope of tasks plus "queues" and "workers"'), ...errors },
        },
      },
      '/api/queue/run/{task}/': {
        parameters: [path('task')],
        get: {
          tags: ['queue'],
          summary: 'Task description, default queue and an example curl line',
          parameters: common,
          responses: { 200: ok('Task'), ...errors },
        },
        post: {
          tags: ['queue'],
          summary: 'Submit a task (202 after the broker confirmed; ?wait=<s> returns the result when done in time)',
          parameters: [...common, p('wait', 'Seconds to wait for the result (max TASK_WAIT_MAX_S)', { type: 'number' })],
          requestBody: jsonBody({
            type: 'object',
            required: ['function'],
            additionalProperties: false,
            properties: {
              function: { type: 'string' },
              queue: { type: 'string' },
              args: { type: 'array' },
              kwargs: { type: 'object' },
              tags: { type: 'array', items: { type: 'string' } },
            },
          }),
          responses: { 200: ok('{task_id, status, result | error}'), 202: ok('{task_id, status: "PENDING", result_url}'), ...errors },
        },
      },
      '/api/queue/task/{task_id}/': {
        parameters: [path('task_id')],
        get: {
          tags: ['queue'],
          summary: 'One run: submission log, state, result or error (?wait=<s> answers once it finished or the time is up)',
          parameters: [...common, p('wait', 'Seconds to hold the answer until the run finished (max TASK_WAIT_MAX_S)', { type: 'number' })],
          responses: { 200: ok('Run'), ...errors },
        },
      },
      '/api/queue/task/{task_id}/revoke/': {
        parameters: [path('task_id')],
        post: {
          tags: ['queue'],
          summary: 'Revoke a pending or running task ({"terminate": true} aborts a running one)',
          responses: { 200: ok('Run'), ...errors },
        },
      },
      '/api/queue/usertasks/': {
        get: {
          tags: ['queue'],
          summary: "The caller's task history, newest first",
          parameters: [
            ...common,
            ...paging,
            p('taskname', 'Comma-separated task names'),
            p('tag', 'One tag'),
            p('status', 'A task state, e.g. SUCCESS'),
          ],
          responses: { 200: ok('Envelope of runs', { $ref: '#/components/schemas/Envelope' }), ...errors },
        },
      },
      '/api/user/': {
        get: {
          summary: 'Profile of the caller, with the API token (its prefix; the whole key only when this request created it) and JWT URLs',
          responses: { 200: ok('Profile'), ...errors },
        },
        post: {
          summary:
            'Rotate the token ({"auth-token":"update"}; the answer shows the new key once), change the password or update the profile',
          requestBody: jsonBody({ type: 'object' }),
          responses: { 200: ok('Updated'), ...errors },
        },
      },
      '/api/token/': {
        post: {
          summary: 'Obtain a JWT pair',
          requestBody: jsonBody({
            type: 'object',
            required: ['username', 'password'],
            properties: { username: { type: 'string' }, password: { type: 'string' } },
          }),
          responses: { 200: ok('{access, refresh}'), ...errors },
        },
      },
      '/api/token/refresh/': {
        post: {
          summary: 'Trade a refresh token (single use) for a new access and refresh token',
          requestBody: jsonBody({ type: 'object', required: ['refresh'] }),
          responses: { 200: ok('{access, refresh}'), ...errors },
        },
      },
      '/api/token/verify/': {
        post: {
          summary: 'Verify a token',
          requestBody: jsonBody({ type: 'object', required: ['token'] }),
          responses: { 200: ok('{}'), ...errors },
        },
      },
      '/api/auth/login/': {
        get: { summary: 'Login page', responses: { 200: { description: 'HTML form' } } },
        post: {
          summary: 'Session login (form or JSON)',
          responses: { 200: ok('Logged in'), 302: { description: 'Redirect after form login' }, ...errors },
        },
      },
      '/api/auth/logout/': { post: { summary: 'End the session', responses: { 200: ok('Logged out'), ...errors } } },
    },
  };
}

export function schemaRouter(): Router {
  const router = Router({ strict: true });
  router.get('/', (req, res) => {
    res.type('application/vnd.oai.openapi+json; charset=utf-8').send(JSON.stringify(openApiDocument(requestBaseUrl(req))));
  });
  return router;
}
