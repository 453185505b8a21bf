/** GET /api/schema/: a parseable OpenAPI 3.1 document covering every endpoint family (that it covers every route: app/route-table.test.ts). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApp, type TestApp } from '../../support/app.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => {
  await app?.close();
});

describe('OpenAPI description', () => {
  it('describes the API with this server as its base URL', async () => {
    const res = await call(app.url, 'GET', '/api/schema/');
    expect(res.status).toBe(200);
    const doc = JSON.parse(res.text);
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.servers[0].url).toBe(app.url);
    for (const path of [
      '/api/data_store/data/',
      '/api/data_store/data/{database}/{collection}/',
      '/api/data_store/data/{database}/{collection}/{id}/',
      '/api/catalog/data/{database}/',
      '/api/queue/',
      '/api/queue/run/{task}/',
      '/api/queue/usertasks/',
      '/api/user/',
      '/api/token/',
      '/api/health/',
    ]) {
      expect(doc.paths[path], path).toBeDefined();
    }
    // The catalog does not create databases, so its root has no POST.
    expect(doc.paths['/api/catalog/data/'].post).toBeUndefined();
    expect(doc.paths['/api/data_store/data/'].post).toBeDefined();
  });

  it('lists the export formats, the indexes and the signed links', async () => {
    const doc = JSON.parse((await call(app.url, 'GET', '/api/schema/')).text);
    const collection = doc.paths['/api/data_store/data/{database}/{collection}/'].get;
    const format = collection.parameters.find((param: { name: string }) => param.name === 'format');
    expect(format.schema.enum).toEqual(expect.arrayContaining(['csv', 'ndjson']));
    expect(collection.parameters.map((param: { name: string }) => param.name)).toEqual(expect.arrayContaining(['fields', 'skip']));
    // Updates and deletes by filter, whose filter is required.
    for (const method of ['patch', 'delete']) {
      const write = doc.paths['/api/data_store/data/{database}/{collection}/'][method];
      expect(write.parameters.find((param: { name: string }) => param.name === 'query').required, method).toBe(true);
    }
    expect(Object.keys(collection.responses[200].content)).toEqual(['application/json', 'text/csv', 'application/x-ndjson']);
    for (const prefix of ['/api/data_store/indexes', '/api/catalog/indexes']) {
      const indexes = doc.paths[`${prefix}/{database}/{collection}/`];
      expect(Object.keys(indexes)).toEqual(['get', 'post']);
      // Each operation names the path's parameters.
      for (const method of ['get', 'post']) {
        const inPath = indexes[method].parameters.filter((param: { in: string }) => param.in === 'path');
        expect(inPath.map((param: { name: string }) => param.name)).toEqual(['database', 'collection']);
      }
      expect(doc.paths[`${prefix}/{database}/{collection}/{name}/`].delete).toBeDefined();
    }
    expect(doc.paths['/api/links/'].post).toBeDefined();
  });

  it('describes request bodies with the zod schemas the handlers parse them with', async () => {
    const doc = JSON.parse((await call(app.url, 'GET', '/api/schema/')).text);
    const token = doc.paths['/api/token/'].post.requestBody.content['application/json'].schema;
    expect(token).toMatchObject({ type: 'object', required: ['username', 'password'], additionalProperties: false });
    const link = doc.paths['/api/links/'].post.requestBody.content['application/json'].schema;
    expect(link.properties.expires_in).toMatchObject({ type: 'integer', minimum: 1, maximum: 86400, default: 3600 });
    expect(link.required).toEqual(['path']);
    // The login takes the form as well as JSON.
    expect(Object.keys(doc.paths['/api/auth/login/'].post.requestBody.content)).toEqual([
      'application/json',
      'application/x-www-form-urlencoded',
    ]);
  });
});
