/**
 * Writes of one record under the collection-existence cache (a collection seen to exist is not
 * asked about again for COLLECTION_CACHE_MS): an insert is one database operation, and still
 * answers 404 for a collection that is missing, dropped through the API (through this or another
 * API process on the same database), or dropped outside it once the cache time has passed; never
 * creates one by accident; and never skips the caller's permission check, which a permission
 * taken away through the service (in another API process) changes at once. The writes by id
 * (replace, merge, delete) keep their answers and their 404s as single operations.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACCOUNT_CACHE_MS } from '../../../src/auth/accounts.js';
import { COLLECTION_CACHE_MS } from '../../../src/documents/store.js';
import { CACHE_LEASES_COLLECTION } from '../../../src/db/cache-leases.js';
import type { CommandStartedEvent } from 'mongodb';
import { call, monitoredUri, startTestApp, type TestApp } from '../../support/app.js';
import { testServices } from '../../support/services.js';

let app: TestApp;
/** A second API process on the same databases (its own caches), for changes made through one and seen by the other. */
let other: TestApp;
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

/** The commands every database client of `target` sends while `action` runs (command monitoring). */
async function commandsDuring(target: TestApp, action: () => Promise<unknown>): Promise<string[]> {
  const seen: string[] = [];
  const listener = (event: CommandStartedEvent) => seen.push(`${event.databaseName}.${event.commandName}`);
  const clients = new Set([target.ctx.mongo, target.ctx.serviceDb.client]);
  for (const client of clients) client.on('commandStarted', listener);
  try {
    await action();
  } finally {
    for (const client of clients) client.off('commandStarted', listener);
  }
  return seen;
}

beforeAll(async () => {
  const env = testServices().env;
  // The production cache time (the suite's default is shorter): the counts below are per window of it.
  const cacheMs = String(COLLECTION_CACHE_MS);
  app = await startTestApp({ MONGO_URI: monitoredUri(env.MONGO_URI ?? ''), SHARED_CACHE_MS: cacheMs });
  other = await startTestApp({ SERVICE_DATABASE: app.ctx.settings.serviceDatabase, SHARED_CACHE_MS: cacheMs });
  db = `${app.prefix}single`;
  await app.users.createUser({ username: 'root', password: 'pw-superuser-1', isSuperuser: true });
  admin = await app.users.tokenFor('root');
  expect((await call(app.url, 'POST', `${base}/`, { token: admin, body: { database: db } })).status).toBe(201);
  await app.users.createUser({ username: 'writer', password: 'pw-writer-123', permissions: [`data_store.${db}.add`] });
  writer = await app.users.tokenFor('writer');
});

afterAll(async () => {
  await other?.close();
  await app?.close();
});

describe('inserting one record', () => {
  it('is one database operation once the caller and the collection have been seen', async () => {
    await createCollection('counted');
    expect((await call(app.url, 'POST', `${base}/${db}/counted/`, { token: writer, body: { n: 0 } })).status).toBe(201);
    // What is cached is looked up again every COLLECTION_CACHE_MS (and once, in the background, the
    // leases' index is built), so a window of requests may meet such a look-up, however slow the
    // machine: each window here holds one request, and the steady state shows as windows that
    // hold its insert alone. A path with an extra operation per insert never gives one.
    const windows: string[][] = [];
    let alone = 0;
    for (let attempt = 0; attempt < 20 && alone < 3; attempt += 1) {
      let res: { status: number; json: { _id?: unknown } } | undefined;
      const commands = await commandsDuring(app, async () => {
        res = await call(app.url, 'POST', `${base}/${db}/counted/`, { token: writer, body: { n: attempt } });
      });
      expect(res?.status).toBe(201);
      expect(typeof res?.json._id).toBe('string');
      expect(
        commands.filter((c) => c.startsWith(`${db}.`)),
        JSON.stringify(commands),
      ).toEqual([`${db}.insert`]);
      windows.push(commands);
      if (commands.length === 1) alone += 1;
    }
    expect(alone, JSON.stringify(windows)).toBe(3);
  });

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

  it('answers 404 at once after another API process dropped the collection, creating nothing, and 201 once that one created it again', async () => {
    await createCollection('shared');
    expect((await call(app.url, 'POST', `${base}/${db}/shared/`, { token: admin, body: { a: 1 } })).status).toBe(201);
    const drop = await call(other.url, 'POST', `${base}/${db}/`, { token: admin, body: { action: 'delete', collection: 'shared' } });
    expect(drop.status).toBe(200);
    const afterDrop = await call(app.url, 'POST', `${base}/${db}/shared/`, { token: admin, body: { a: 2 } });
    expect([afterDrop.status, afterDrop.json.error.code]).toEqual([404, 'no_such_collection']);
    expect(await engineHas('shared')).toBe(false);
    expect((await call(other.url, 'POST', `${base}/${db}/`, { token: admin, body: { collection: 'shared' } })).status).toBe(201);
    const again = await call(app.url, 'POST', `${base}/${db}/shared/`, { token: admin, body: { a: 3 } });
    expect(again.status).toBe(201);
    const list = await call(other.url, 'GET', `${base}/${db}/shared/`, { token: admin });
    expect(list.json.results).toEqual([{ _id: again.json._id, a: 3 }]);
  });

  it('never lets inserts in flight through another API process bring back a collection dropped meanwhile', async () => {
    await createCollection('busy');
    let stop = false;
    const statuses: number[] = [];
    const writing = (async () => {
      for (let n = 0; !stop; n += 1)
        statuses.push((await call(app.url, 'POST', `${base}/${db}/busy/`, { token: admin, body: { n } })).status);
    })();
    await sleep(300);
    const drop = await call(other.url, 'POST', `${base}/${db}/`, { token: admin, body: { action: 'delete', collection: 'busy' } });
    expect(drop.status).toBe(200);
    await sleep(300);
    stop = true;
    await writing;
    expect(await engineHas('busy')).toBe(false);
    // Written until the drop, refused from then on, and nothing else.
    const firstRefused = statuses.indexOf(404);
    expect(firstRefused).toBeGreaterThan(0);
    expect(statuses.slice(0, firstRefused).every((s) => s === 201)).toBe(true);
    expect(statuses.slice(firstRefused).every((s) => s === 404)).toBe(true);
  });

  it('answers 404 at once after another API process dropped the whole database', async () => {
    const gone = `${app.prefix}gone`;
    expect((await call(app.url, 'POST', `${base}/`, { token: admin, body: { database: gone } })).status).toBe(201);
    expect((await call(app.url, 'POST', `${base}/${gone}/`, { token: admin, body: { collection: 'c' } })).status).toBe(201);
    expect((await call(app.url, 'POST', `${base}/${gone}/c/`, { token: admin, body: { a: 1 } })).status).toBe(201);
    expect((await call(other.url, 'POST', `${base}/`, { token: admin, body: { action: 'delete', database: gone } })).status).toBe(200);
    const res = await call(app.url, 'POST', `${base}/${gone}/c/`, { token: admin, body: { a: 2 } });
    expect(res.status).toBe(404);
    expect((await app.ctx.mongo.db(gone).listCollections({}, { nameOnly: true }).toArray()).length).toBe(0);
  });

  it('answers 403 at once after another API process took the permission away', async () => {
    await createCollection('revoked');
    await app.users.createUser({ username: 'fleeting', password: 'pw-fleeting-123', permissions: [`data_store.${db}.add`] });
    const fleeting = await app.users.tokenFor('fleeting');
    expect((await call(app.url, 'POST', `${base}/${db}/revoked/`, { token: fleeting, body: { a: 1 } })).status).toBe(201);
    await other.users.revokePermissions('fleeting', [`data_store.${db}.add`]);
    const refused = await call(app.url, 'POST', `${base}/${db}/revoked/`, { token: fleeting, body: { a: 2 } });
    expect(refused.status).toBe(403);
    const list = await call(app.url, 'GET', `${base}/${db}/revoked/`, { token: admin });
    expect(list.json.count).toBe(1);
  });

  it('refuses at once, in another API process, an API token key replaced by a new one', async () => {
    const first = await app.users.tokenFor('writer');
    expect((await call(app.url, 'POST', `${base}/${db}/counted/`, { token: first, body: { a: 1 } })).status).toBe(201);
    writer = await other.users.tokenFor('writer');
    expect((await call(app.url, 'POST', `${base}/${db}/counted/`, { token: first, body: { a: 2 } })).status).toBe(401);
    expect((await call(app.url, 'POST', `${base}/${db}/counted/`, { token: writer, body: { a: 3 } })).status).toBe(201);
  });

  it('is not held up by the mark of a drop whose API process ended before finishing it', async () => {
    await createCollection('orphaned');
    const leases = app.ctx.serviceDb.collection<{ _id: string }>(CACHE_LEASES_COLLECTION);
    const long = new Date(Date.now() + 3_600_000);
    // What a process leaves behind that stopped between marking the collection and unmarking it.
    await leases.insertOne({
      _id: `collection:${db}\u0000orphaned`,
      scope: `database:${db}`,
      marks: 1,
      markedUntil: new Date(Date.now() - 1_000),
      until: new Date(),
      expires: long,
    } as { _id: string });
    const started = Date.now();
    const res = await call(app.url, 'POST', `${base}/${db}/orphaned/`, { token: admin, body: { a: 1 } });
    expect(res.status).toBe(201);
    expect(Date.now() - started).toBeLessThan(5_000);
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
