/**
 * The workers' database role on the local engine (FerretDB v2), which has no role commands and
 * so cannot enforce roles: the API notices once, says so in one log line, and creating and
 * deleting data-store databases works as before; the installer's user set-up through the wire
 * is refused there (that engine's logins are set in SQL as it starts, see
 * test/integration/local-services/engine-logins.test.ts). (Enforcement itself needs the official
 * MongoDB image, which cannot run here: the role documents are checked by
 * test/unit/installation/database-roles.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MongoClient } from 'mongodb';
import { connectMongo } from '../../../src/db/mongo-client.js';
import { ensureDatabaseUsers } from '../../../src/installation/database-users.js';
import { ACCOUNTS, type Secrets } from '../../../src/installation/secrets.js';
import { call, testSettings } from '../../support/app.js';
import { startAppWithCapturedLogs, type LoggedApp } from '../auth/helpers.js';

const NOTICE = /worker database privileges are not managed: this database engine has no role commands/;

let app: LoggedApp;
let token: string;

beforeAll(async () => {
  app = await startAppWithCapturedLogs();
  await app.users.createUser({ username: 'root', password: 'root-pass-12345', isSuperuser: true });
  token = await app.users.tokenFor('root');
});

afterAll(async () => {
  await app?.close();
});

const notices = () =>
  app
    .logLines()
    .split('\n')
    .filter((line) => NOTICE.test(line));

describe('the API on an engine without roles', () => {
  it('says once at start-up that it cannot manage the workers role', () => {
    expect(notices()).toHaveLength(1);
  });

  it('creates and deletes data-store databases as before, without further attempts', async () => {
    const db = `${app.prefix}roles`;
    const created = await call(app.url, 'POST', '/api/data_store/data/', { token, body: { database: db } });
    expect(created.status, created.text).toBe(201);
    const deleted = await call(app.url, 'POST', '/api/data_store/data/', { token, body: { database: db, action: 'delete' } });
    expect(deleted.status, deleted.text).toBe(200);
    expect(notices()).toHaveLength(1);
    expect(app.logLines()).not.toMatch(/could not update the worker database role/);
  });
});

describe('the installer user set-up on an engine without roles', () => {
  let admin: MongoClient;
  afterAll(async () => {
    await admin?.close();
  });

  it('refuses to manage users through the wire, and creates none', async () => {
    admin = await connectMongo(testSettings().mongo);
    const secrets = { DB_API_PASSWORD: 'api-password-0123456789', DB_WORKER_PASSWORD: 'worker-password-0123456789' } as Secrets;
    await expect(ensureDatabaseUsers(admin, secrets)).rejects.toThrow(/command is not supported/);
    const created = await admin
      .db(ACCOUNTS.authSource)
      .command({ createUser: ACCOUNTS.database.api, pwd: secrets.DB_API_PASSWORD, roles: [] })
      .then(
        () => 'created',
        (err: Error) => err.message,
      );
    expect(created).not.toBe('created');
  });
});
