/**
 * Writes of one record under the collection-existence cache (a collection seen to exist is not
 * asked about again for COLLECTION_CACHE_MS): an insert still answers 404 for a collection that
 * is missing, dropped through the API, or dropped outside it once the cache time has passed;
 * never creates one by accident; and never skips the caller's permission check. The writes by
 * id (replace, merge, delete) keep their answers and their 404s as single operations.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACCOUNT_CACHE_MS } from '../../../src/auth/accounts.js';
import { COLLECTION_CACHE_MS } from '../../../src/documents/store.js';
import { call, startTestApp, type TestApp } from '../../support/app.js';

let app: TestApp;
let admin: string;
let writer: string;
let db: string;
const base = '/api/data_store/data';

async function createCollection(col: string): Promise<void> {
  expect((await call(app.url, 'POST', `${base}/${db}/`, { token: admin, body: { collection: col } })).status).toBe(201);
}

/** Whether the engine has the collection, asked directly. */
async function engineHas(col: string): Promise<boolean> {
  return (await app.ctx.mongo.db(db).listCollections({ name: col }, { nameOnly: true }).toArray()).length > 0;
}

beforeAll(async () => {
  app = await startTestApp();
  db = `${app.prefix}single`;
  await app.users.createUser({ username: 'root', password: 'pw-superuser-1', isSuperuser: true });
  admin = await app.users.tokenFor('root');
  expect((await call(app.url, 'POST', `${base}/`, { token: admin, body: { database: db } })).status).toBe(201);
  await app.users.createUser({ username: 'writer', password: 'pw-writer-123', permissions: [`data_store.${db}.add`] });
  writer = await app.users.tokenFor('writer');
});

afterAll(async () => {
  await app?.close();
});

describe('inserting one record', () => {
  it('answers 404 for a collection that does not exist, and creates none', async () => {
    const res = await call(app.url, 'POST', `${base}/${db}/never/`, { token: admin, body: { a: 1 } });
    expect(res.status).toBe(404);
    expect(res.json.error.code).toBe('no_such_collection');
    expect(await engineHas('never')).toBe(false);
  });

  it('answers 404 at once after the collection is dropped through the API, and 201 once it is created again', async () => {
    await createCollection('cycled');
    expect((await call(app.url, 'POST', `${base}/${db}/cycled/`, { token: admin, body: { a: 1 } })).status).toBe(201);
    const drop = await call(app.url, 'POST', `${base}/${db}/`, { token: admin, body: { action: 'delete', collection: 'cycled' } });
    expect(drop.status).toBe(200);
    const afterDrop = await call(app.url, 'POST', `${base}/${db}/cycled/`, { token: admin, body: { a: 2 } });
    expect(afterDrop.status).toBe(404);
    expect(await engineHas('cycled')).toBe(false);
    await createCollection('cycled');
    const again = await call(app.url, 'POST', `${base}/${db}/cycled/`, { token: admin, body: { a: 3 } });
    expect(again.status).toBe(201);
    const list = await call(app.url, 'GET', `${base}/${db}/cycled/`, { token: admin });
    expect(list.json.results).toEqual([{ _id: again.json._id, a: 3 }]);
  });

  it('answers 404 once the cache time has passed after a drop outside the API', async () => {
    await createCollection('outside');
    expect((await call(app.url, 'POST', `${base}/${db}/outside/`, { token: admin, body: { a: 1 } })).status).toBe(201);
    await app.ctx.mongo.db(db).collection('outside').drop();
    await sleep(COLLECTION_CACHE_MS + 200);
    const res = await call(app.url, 'POST', `${base}/${db}/outside/`, { token: admin, body: { a: 2 } });
    expect(res.status).toBe(404);
    expect(await engineHas('outside')).toBe(false);
  });

  it('checks the permission of every insert, whatever the cache knows of the collection', async () => {
    await createCollection('guarded');
    expect((await call(app.url, 'POST', `${base}/${db}/guarded/`, { token: writer, body: { a: 1 } })).status).toBe(201);
    await app.ctx.auth.models.User.updateOne({ username: 'writer' }, { $set: { permissions: [] } }).exec();
    // Accounts are reused for ACCOUNT_CACHE_MS (a grant changed outside the service's own paths).
    await sleep(ACCOUNT_CACHE_MS + 200);
    const refused = await call(app.url, 'POST', `${base}/${db}/guarded/`, { token: writer, body: { a: 2 } });
    expect(refused.status).toBe(403);
    const list = await call(app.url, 'GET', `${base}/${db}/guarded/`, { token: admin });
    expect(list.json.count).toBe(1);
  });
});

describe('writing one record by id', () => {
  it('replaces, merges and deletes a record, answering as before, and 404 for a record or collection that is not there', async () => {
    await createCollection('byid');
    const created = await call(app.url, 'POST', `${base}/${db}/byid/`, { token: admin, body: { a: 1, keep: 'x' } });
    const id = created.json._id as string;
    const url = `${base}/${db}/byid/${id}/`;
    const replaced = await call(app.url, 'PUT', url, { token: admin, body: { b: 2.5 } });
    expect([replaced.status, replaced.json]).toEqual([200, { _id: id, b: 2.5 }]);
    const merged = await call(app.url, 'PATCH', url, { token: admin, body: { c: 'three' } });
    expect([merged.status, merged.json]).toEqual([200, { _id: id, b: 2.5, c: 'three' }]);
    const read = await call(app.url, 'GET', url, { token: admin });
    expect(read.json).toEqual({ _id: id, b: 2.5, c: 'three' });
    const deleted = await call(app.url, 'DELETE', url, { token: admin });
    expect([deleted.status, deleted.json]).toEqual([200, { deleted: id }]);
    for (const method of ['PUT', 'PATCH', 'DELETE']) {
      const gone = await call(app.url, method, url, { token: admin, body: method === 'DELETE' ? undefined : { d: 4 } });
      expect([method, gone.status, gone.json.error.code]).toEqual([method, 404, 'no_such_record']);
      const missing = await call(app.url, method, `${base}/${db}/nothere/${id}/`, {
        token: admin,
        body: method === 'DELETE' ? undefined : { d: 4 },
      });
      expect([method, missing.status, missing.json.error.code]).toEqual([method, 404, 'no_such_collection']);
    }
    expect(await engineHas('nothere')).toBe(false);
  });

  it('writes a record whose _id is a string of 24 hex digits, found as the string', async () => {
    await createCollection('hexid');
    const hex = 'abcdefabcdefabcdefabcdef';
    expect((await call(app.url, 'POST', `${base}/${db}/hexid/`, { token: admin, body: { _id: hex, n: 1 } })).status).toBe(201);
    const merged = await call(app.url, 'PATCH', `${base}/${db}/hexid/${hex}/`, { token: admin, body: { $inc: { n: 1 } } });
    expect([merged.status, merged.json]).toEqual([200, { _id: hex, n: 2 }]);
    const replaced = await call(app.url, 'PUT', `${base}/${db}/hexid/${hex}/`, { token: admin, body: { n: 10 } });
    expect([replaced.status, replaced.json]).toEqual([200, { _id: hex, n: 10 }]);
    expect((await call(app.url, 'DELETE', `${base}/${db}/hexid/${hex}/`, { token: admin })).json).toEqual({ deleted: hex });
  });
});
