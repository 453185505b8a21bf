/**
 * Moving an installation's service data from the shared engine into the private store (see
 * src/installation/private-store.ts), against real engines: the suite's shared one and a private
 * FerretDB of this file's own on a Unix socket. Interrupted moves are taken up where they stopped,
 * and once the move is done the shared engine is never read again.
 */
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MongoClient, type Db, type Document } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectMongo } from '../../../src/db/mongo-client.js';
import { toMongoSettings, mongoEnvSchema } from '../../../src/config/connections.js';
import { LAYOUT_COLLECTION, moveServiceData } from '../../../src/installation/private-store.js';
import { startPrivateFerretDb, type MongoWireHandle } from '../../../src/local-services/mongo-wire.js';
import { testServices } from '../../support/services.js';

let dir: string;
let store: MongoWireHandle;
let shared: MongoClient;
let privateClient: MongoClient;
const login = { username: 'cybercom-api', password: randomBytes(18).toString('base64url') };

beforeAll(async () => {
  // Short: the socket path must fit in 107 bytes.
  dir = await mkdtemp(join(tmpdir(), 'cc-move-'));
  await chmod(dir, 0o711); // PostgreSQL runs as its own user and walks through
  store = await startPrivateFerretDb({ dir: join(dir, 'store'), ...login });
  shared = await connectMongo(toMongoSettings(mongoEnvSchema.parse(testServices().env)));
  privateClient = new MongoClient(store.uri, { directConnection: true, auth: login, authSource: store.authSource });
  await privateClient.connect();
}, 120_000);

afterAll(async () => {
  await privateClient?.close();
  await shared?.close();
  await store?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
}, 60_000);

function freshDatabase(): string {
  return `move_${randomBytes(4).toString('hex')}`;
}

/** Users with string ids (as the service's are), so documents compare as they were written. */
const users = (n: number): Document[] =>
  Array.from({ length: n }, (_, i) => ({ _id: `u${String(i).padStart(4, '0')}`, username: `user${i}`, password: `scrypt$${i}` }));

async function names(db: Db): Promise<string[]> {
  return (await db.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name).sort();
}

describe('moveServiceData', () => {
  it('moves every collection but the task results, with documents and indexes, and marks the move done', async () => {
    const database = freshDatabase();
    const from = shared.db(database);
    await from.collection('users').insertMany(users(2500));
    await from.collection('users').createIndex({ username: 1 }, { unique: true, name: 'username_unique' });
    // A session that is still valid: the engine's TTL job would delete an expired one under the test.
    await from.collection('django_session').insertOne({ _id: 'abc' as never, expire_date: new Date(Date.now() + 3_600_000) });
    await from.collection('django_session').createIndex({ expire_date: 1 }, { expireAfterSeconds: 0, name: 'expiry' });
    await from.collection('tombstone').insertOne({ _id: 'task-1' as never, status: 'SUCCESS' });
    await from.collection('health_probe_0011').insertOne({ at: new Date() });

    const outcome = await moveServiceData(shared, privateClient, database);

    expect(outcome).toEqual({ alreadyDone: false, moved: { django_session: 1, users: 2500 } });
    const to = privateClient.db(database);
    expect(await names(to)).toEqual(['django_session', LAYOUT_COLLECTION, 'users']);
    expect(await to.collection('users').countDocuments()).toBe(2500);
    expect(await to.collection('users').findOne({ username: 'user7' })).toEqual({ _id: 'u0007', username: 'user7', password: 'scrypt$7' });
    const indexes = await to.collection('users').listIndexes().toArray();
    expect(indexes.find((i) => i.name === 'username_unique')).toMatchObject({ key: { username: 1 }, unique: true });
    const ttl = await to.collection('django_session').listIndexes().toArray();
    expect(ttl.find((i) => i.name === 'expiry')).toMatchObject({ expireAfterSeconds: 0 });
    // The results stay where the workers write them; nothing of the service's own data is left.
    expect(await names(from)).toEqual(['health_probe_0011', 'tombstone']);
    await from.dropDatabase();
    await to.dropDatabase();
  });

  it('takes up an interrupted move: a half-copied collection is copied again, a moved one is kept', async () => {
    const database = freshDatabase();
    const from = shared.db(database);
    const to = privateClient.db(database);
    // The state a crash leaves: `users` copied halfway (still complete on the shared engine), the
    // tokens moved already (dropped there), the marker not yet written.
    await from.collection('users').insertMany(users(300));
    await to.collection('users').insertMany(users(120));
    await to.collection('authtoken_token').insertOne({ _id: 'tok' as never, key_hash: 'ab12' });

    const outcome = await moveServiceData(shared, privateClient, database);

    expect(outcome.moved).toEqual({ users: 300 });
    expect(await to.collection('users').countDocuments()).toBe(300);
    expect(await to.collection('authtoken_token').find().toArray()).toEqual([{ _id: 'tok', key_hash: 'ab12' }]);
    expect(await names(from)).toEqual([]);
    expect(await moveServiceData(shared, privateClient, database)).toEqual({ alreadyDone: true, moved: {} });
    await to.dropDatabase();
  });

  it('never copies again once done: what a worker writes on the shared engine later stays there', async () => {
    const database = freshDatabase();
    const from = shared.db(database);
    const to = privateClient.db(database);
    await from.collection('users').insertMany(users(3));
    await moveServiceData(shared, privateClient, database);
    await from.collection('users').insertOne({ _id: 'forged', username: 'user1', is_superuser: true } as never);

    expect(await moveServiceData(shared, privateClient, database)).toEqual({ alreadyDone: true, moved: {} });
    expect(await to.collection('users').countDocuments({ is_superuser: true })).toBe(0);
    expect(await to.collection('users').countDocuments()).toBe(3);
    await from.dropDatabase();
    await to.dropDatabase();
  });
});
