/**
 * API token keys are never stored: the database holds a SHA-256 hash (the lookup key) and a short
 * prefix (for display). The whole key is shown only in the answer that makes it. Tokens stored
 * in plain text by earlier versions keep working and are hashed at start-up.
 */
import { createHash } from 'node:crypto';
import { BSON, type Db, type MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectMongo } from '../../../src/db/mongo-client.js';
import { call, serviceDatabaseName, startTestApp, testSettings, type TestApp } from '../../support/app.js';
import { adminApiGet, adminApiPostJson, adminBrowser, ensureRoot, ROOT } from '../admin/support.js';
import { Browser, closeAndDrop, expectError } from './helpers.js';

const sha256 = (key: string) => createHash('sha256').update(key).digest('hex');

/** Every document of every collection of the service database, serialised. */
async function wholeDatabase(db: Db): Promise<string> {
  const collections = await db.listCollections({}, { nameOnly: true }).toArray();
  const dumps = await Promise.all(collections.map(async ({ name }) => [name, await db.collection(name).find({}).toArray()] as const));
  return BSON.EJSON.stringify(Object.fromEntries(dumps));
}

const LEGACY_KEYS = { olduser: 'a1b2c3d4e5f60718293a4b5c6d7e8f9012345678', veteran: '0123456789abcdef0123456789abcdef01234567' };

let legacyClient: MongoClient;
let serviceDatabase: string;
let app: TestApp;

beforeAll(async () => {
  // The database as an earlier version left it: plaintext keys under a unique index on `key`.
  serviceDatabase = serviceDatabaseName();
  legacyClient = await connectMongo(testSettings().mongo);
  const legacy = legacyClient.db(serviceDatabase);
  await legacy.collection('authtoken_token').createIndex({ key: 1 }, { unique: true });
  await legacy.collection('authtoken_token').createIndex({ user: 1 }, { unique: true });
  for (const [username, key] of Object.entries(LEGACY_KEYS)) {
    const { insertedId } = await legacy.collection('auth_user').insertOne({
      username,
      email: '',
      first_name: '',
      last_name: '',
      password: '!unusable',
      is_active: true,
      is_staff: false,
      is_superuser: false,
      groups: [],
      permissions: [],
      date_joined: new Date(),
      last_login: null,
    });
    await legacy.collection('authtoken_token').insertOne({ key, user: insertedId, created: new Date() });
  }
  app = await startTestApp({ SERVICE_DATABASE: serviceDatabase, LOGIN_MAX_FAILURES: '1000' });
});

afterAll(async () => {
  await closeAndDrop(app);
  await legacyClient?.close();
});

describe('tokens stored by an earlier version (plaintext keys)', () => {
  it('still authenticate after the upgrade', async () => {
    for (const [username, key] of Object.entries(LEGACY_KEYS)) {
      const res = await call(app.url, 'GET', '/api/user/', { token: key });
      expect(res.status, res.text).toBe(200);
      expect(res.json.username).toBe(username);
    }
  });

  it('are stored hashed: no plaintext key is left in the database', async () => {
    const dump = await wholeDatabase(app.ctx.serviceDb);
    for (const key of Object.values(LEGACY_KEYS)) expect(dump).not.toContain(key);
    const docs = await app.ctx.serviceDb.collection('authtoken_token').find({}).toArray();
    expect(docs).toHaveLength(2);
    for (const doc of docs) expect(doc.key).toBeUndefined();
    expect(docs.map((d) => d.key_hash).sort()).toEqual(Object.values(LEGACY_KEYS).map(sha256).sort());
  });

  it('are not shown again by the profile, only their prefix', async () => {
    const res = await call(app.url, 'GET', '/api/user/', { token: LEGACY_KEYS.olduser });
    expect(res.json.authentication['auth-token']).toBeNull();
    expect(res.json.authentication['auth-token-prefix']).toBe(LEGACY_KEYS.olduser.slice(0, 8));
  });

  it('migrate only once: a restart changes nothing and the keys still work', async () => {
    const before = await wholeDatabase(app.ctx.serviceDb);
    await app.close();
    app = await startTestApp({ SERVICE_DATABASE: serviceDatabase, LOGIN_MAX_FAILURES: '1000' });
    expect(await wholeDatabase(app.ctx.serviceDb)).toBe(before);
    expect((await call(app.url, 'GET', '/api/user/', { token: LEGACY_KEYS.veteran })).status).toBe(200);
  });
});

describe('new and rotated keys', () => {
  it('are never written to the database; the answer that makes a key is the only place it appears', async () => {
    await app.users.createUser({ username: 'fresh', password: 'fresh-pass-123' });
    const b = new Browser(app.url);
    await b.loginJson('fresh', 'fresh-pass-123');
    const first = await b.get('/api/user/');
    const created = first.json.authentication['auth-token'] as string;
    expect(created).toMatch(/^[0-9a-f]{40}$/);
    expect(await wholeDatabase(app.ctx.serviceDb)).not.toContain(created);

    const again = await b.get('/api/user/');
    expect(again.json.authentication['auth-token']).toBeNull();
    expect(again.json.authentication['auth-token-prefix']).toBe(created.slice(0, 8));
    expect(again.text).not.toContain(created);

    const rotated = await call(app.url, 'POST', '/api/user/', { token: created, body: { 'auth-token': 'update' } });
    expect(rotated.status, rotated.text).toBe(200);
    const next = rotated.json.authentication['auth-token'] as string;
    expect(next).toMatch(/^[0-9a-f]{40}$/);
    expect(rotated.json.authentication['auth-token-prefix']).toBe(next.slice(0, 8));
    const dump = await wholeDatabase(app.ctx.serviceDb);
    expect(dump).not.toContain(next);
    expect(dump).not.toContain(created);
    expectError(await call(app.url, 'GET', '/api/user/', { token: created }), 401, 'invalid_token');
    expect((await call(app.url, 'GET', '/api/user/', { token: next })).status).toBe(200);
  });

  it('issued or rotated in the admin site are not stored either, and lists show a prefix only', async () => {
    await ensureRoot(app);
    await app.users.createUser({ username: 'scripted', password: 'scripted-pass-1' });
    const root = await adminBrowser(app, ROOT.username, ROOT.password);
    const issued = await adminApiPostJson(root, '/resources/Token/actions/issue', { username: 'scripted' });
    expect(issued.status, issued.text).toBe(200);
    const key = issued.json.issued.key as string;
    expect(await wholeDatabase(app.ctx.serviceDb)).not.toContain(key);

    const doc = await app.ctx.serviceDb.collection('authtoken_token').findOne({ key_hash: sha256(key) });
    expect(doc).not.toBeNull();
    const rotated = await adminApiPostJson(root, `/resources/Token/records/${doc?._id.toString()}/rotate`, { confirm: 'yes' });
    expect(rotated.status, rotated.text).toBe(200);
    const next = rotated.json.issued.key as string;
    expect(await wholeDatabase(app.ctx.serviceDb)).not.toContain(next);
    expectError(await call(app.url, 'GET', '/api/user/', { token: key }), 401, 'invalid_token');

    const list = await adminApiGet(root, '/resources/Token/actions/list');
    expect(list.status, list.text).toBe(200);
    expect(list.text).not.toContain(next);
    expect(list.text).not.toContain(sha256(next));
    const record = list.json.records.find((r: { params: { key_prefix: string } }) => r.params.key_prefix === `${next.slice(0, 8)}…`);
    expect(record, list.text).toBeDefined();
  });
});
