/**
 * The worker's data-store permission check needs nothing from the service's users, groups,
 * tokens or sessions: it decides from what the task message carries, so a worker whose database
 * login cannot read those collections works the same. Every command the worker's client sends
 * is recorded to prove it.
 */
import { MongoClient, type CommandStartedEvent } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mongoClientOptions } from '../../../src/db/mongo-client.js';
import { databaseCodename } from '../../../src/auth/permissions.js';
import { decodeSubmitterAccess, encodeSubmitterAccess, submitterAccessOf } from '../../../src/queue/protocol/submitter-access.js';
import { DataStore, PermissionError } from '../../../src/worker/data-store.js';
import { mongoSettings, unique } from './support.js';

const serviceDatabase = unique('svc');
const dataDatabase = unique('data');
const commands: CommandStartedEvent[] = [];
let client: MongoClient;
let store: DataStore;

/** The data store of a task whose message carries `permissions` for `username`. */
function taskStore(username: string, permissions: string[], isSuperuser = false): DataStore {
  const headers = encodeSubmitterAccess(submitterAccessOf({ username, isSuperuser, permissions }));
  return store.forTask(decodeSubmitterAccess(headers, username));
}

beforeAll(async () => {
  const settings = mongoSettings();
  client = new MongoClient(settings.uri, { ...mongoClientOptions(settings), monitorCommands: true });
  client.on('commandStarted', (event) => commands.push(event));
  await client.connect();
  store = new DataStore(client, serviceDatabase);
});

afterAll(async () => {
  await client
    ?.db(dataDatabase)
    .dropDatabase()
    .catch(() => undefined);
  await client?.close();
});

const SERVICE_COLLECTIONS = ['auth_user', 'auth_group', 'auth_permission', 'authtoken_token', 'sessions'];

describe("the worker's data-store check", () => {
  it('reads no user, group, token or session to grant or refuse access', async () => {
    commands.length = 0;
    const granted = await taskStore('writer', [databaseCodename(dataDatabase, 'add')]).collectionFor(
      'writer',
      'add',
      dataDatabase,
      'records',
    );
    const superuser = await taskStore('root', [], true).collectionFor('root', 'delete', dataDatabase, 'records');
    await expect(
      taskStore('reader', [databaseCodename(dataDatabase, 'safe')]).collectionFor('reader', 'add', dataDatabase, 'records'),
    ).rejects.toThrow(PermissionError);
    await expect(store.forTask(null).collectionFor('root', 'safe', dataDatabase, 'records')).rejects.toThrow(PermissionError);
    // Deciding took no database command at all.
    expect(commands.map((c) => c.commandName)).toEqual([]);

    await granted.insertOne({ n: 1 });
    expect(await superuser.countDocuments()).toBe(1);
    const touched = commands.map((c) => `${c.databaseName}.${String(c.command[c.commandName])}`);
    expect(touched.some((ns) => ns.startsWith(`${serviceDatabase}.`))).toBe(false);
    for (const name of SERVICE_COLLECTIONS) expect(touched.join(' ')).not.toContain(name);
  });

  it('ignores permissions carried for another user than the one the task names', async () => {
    const forWriter = taskStore('writer', [databaseCodename(dataDatabase, 'add')]);
    await expect(forWriter.collectionFor('mallory', 'add', dataDatabase, 'records')).rejects.toThrow(PermissionError);
    const headers = encodeSubmitterAccess(submitterAccessOf({ username: 'writer', isSuperuser: true, permissions: [] }));
    expect(decodeSubmitterAccess(headers, 'mallory')).toBeNull();
  });
});
