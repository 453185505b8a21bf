/**
 * GET /api/schema/ — the OpenAPI 3.1 description of the API (the shared rules are in
 * docs/api-behaviour.md), so clients and schemathesis-style fuzzers can discover every endpoint
 * and parameter. It is made from the routes the app mounted from its route table, each route's
 * declared operations under its mount path; request bodies declared as zod schemas (the ones the
 * handlers parse with) are converted by zod-to-openapi.
 */
import { OpenAPIRegistry, OpenApiGeneratorV31, type RouteConfig } from '@asteasolutions/zod-to-openapi';
import { Router } from 'express';
import { z } from 'zod';
import { requestBaseUrl } from '../http/base-url.js';
import { ENVELOPE_SCHEMA, ERROR_SCHEMA } from '../http/openapi-parts.js';
import { openApiPath, parameterNames, route, serve, type Mount } from '../http/route-table.js';

export const SCHEMA_ROUTES = {
  schema: route('/', {
    GET: {
      summary: 'This description of the API (OpenAPI 3.1)',
      responses: { 200: { description: 'The document', content: { 'application/vnd.oai.openapi+json': { schema: { type: 'object' } } } } },
    },
  }),
};

/** The document without its `servers` (those depend on the request's host). */
export function openApiDocument(mounts: readonly Mount[]): Record<string, unknown> {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('schemas', 'Error', ERROR_SCHEMA);
  registry.registerComponent('schemas', 'Envelope', ENVELOPE_SCHEMA);
  registry.registerComponent('securitySchemes', 'token', {
    type: 'apiKey',
    in: 'header',
    name: 'Authorization',
    description: 'Token <key>',
  });
  registry.registerComponent('securitySchemes', 'jwt', { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' });
  registry.registerComponent('securitySchemes', 'session', { type: 'apiKey', in: 'cookie', name: 'sessionid' });
  for (const { prefix, routes } of mounts) {
    for (const decl of routes) {
      const path = prefix + decl.path;
      const params = parameterNames(decl, path);
      for (const [verb, operation] of Object.entries(decl.operations)) {
        registry.registerPath({
          ...operation,
          method: verb.toLowerCase(),
          path: openApiPath(decl, path),
          request: {
            ...operation.request,
            ...(params.length === 0 ? {} : { params: z.object(Object.fromEntries(params.map(({ name }) => [name, z.string()]))) }),
          },
        } as RouteConfig);
      }
    }
  }
  const { webhooks: _webhooks, ...document } = new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: { title: 'cybercom-ts API', version: '1', description: 'Catalog, data store and task queue. See README.md.' },
    security: [{ token: [] }, { jwt: [] }, { session: [] }, {}],
  });
  return document;
}

/** `mounts`: what the app mounted, read at the first request (when the app is complete). */
export function schemaRouter(mounts: readonly Mount[]): Router {
  const router = Router({ strict: true });
  let document: Record<string, unknown> | undefined;
  serve(router, SCHEMA_ROUTES.schema, {
    GET: async (req, res) => {
      document ??= openApiDocument(mounts);
      const { openapi, info, ...rest } = document;
      res
        .type('application/vnd.oai.openapi+json; charset=utf-8')
        .send(JSON.stringify({ openapi, info, servers: [{ url: requestBaseUrl(req) }], ...rest }));
    },
  });
  return router;
}
