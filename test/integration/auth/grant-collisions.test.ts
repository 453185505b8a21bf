/**
 * Grants that look alike must not open each other's doors. With `_`-joined codenames, database
 * `a_b` + collection `c` and database `a` + collection `b_c` were one grant, a database grant on
 * `a_b` was the collection grant on `a`/`b`, and tasks `a.b_c` and `a_b.c` shared one codename.
 * Each case here is granted with the service's own codename builders and tried through HTTP.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collectionCodename, databaseCodename, taskCodename } from '../../../src/auth/permissions.js';
import { call, startTestApp, type TestApp } from '../../support/app.js';

let app: TestApp;
let p: string;
const token = new Map<string, string>();
const base = '/api/data_store/data';

beforeAll(async () => {
  app = await startTestApp();
  p = app.prefix;
  await app.users.createUser({ username: 'root', password: 'pw-superuser-1', isSuperuser: true });
  const su = await app.users.tokenFor('root');
  for (const [db, cols] of [
    [`${p}a_b`, ['c']],
    [`${p}a`, ['b_c', 'b']],
  ] as const) {
    expect((await call(app.url, 'POST', `${base}/`, { token: su, body: { database: db } })).status).toBe(201);
    for (const col of cols)
      expect((await call(app.url, 'POST', `${base}/${db}/`, { token: su, body: { collection: col } })).status).toBe(201);
  }
  const grants: Record<string, string[]> = {
    colAbC: [collectionCodename('data_store', `${p}a_b`, 'c', 'safe')],
    colAB: [collectionCodename('data_store', `${p}a`, 'b', 'safe')],
    dbAb: [databaseCodename(`${p}a_b`, 'safe')],
    task: [taskCodename('a.b_c')],
  };
  for (const [username, permissions] of Object.entries(grants)) {
    await app.users.createUser({ username, password: `pw-${username}-123`, permissions });
    token.set(username, await app.users.tokenFor(username));
  }
});

afterAll(async () => {
  if (app !== undefined) {
    for (const db of [`${p}a_b`, `${p}a`]) await app.ctx.mongo.db(db).dropDatabase();
    await app.close();
  }
});

const get = async (user: string, path: string) =>
  (await call(app.url, 'GET', `${base}${path}`, { token: token.get(user) as string })).status;

describe('grants that used to collide', () => {
  it('a grant on a_b/c reads a_b/c but not a/b_c, and does not reveal database a', async () => {
    expect(await get('colAbC', `/${p}a_b/c/`)).toBe(200);
    expect(await get('colAbC', `/${p}a/b_c/`)).toBe(403);
    expect(await get('colAbC', `/${p}a/`)).toBe(403);
  });

  it('a database grant on a_b is not the collection grant on a/b', async () => {
    expect(await get('dbAb', `/${p}a_b/c/`)).toBe(200);
    expect(await get('dbAb', `/${p}a/b/`)).toBe(403);
  });

  it('a collection grant on a/b is not the database grant on a_b', async () => {
    expect(await get('colAB', `/${p}a/b/`)).toBe(200);
    expect(await get('colAB', `/${p}a_b/c/`)).toBe(403);
  });

  it('a grant for task a.b_c does not run task a_b.c', async () => {
    const run = (task: string) => call(app.url, 'POST', `/api/queue/run/${task}/`, { token: token.get('task') as string, body: {} });
    expect((await run('a_b.c')).status).toBe(403);
    // No worker offers a.b_c here, so the answer is not 2xx, but it is not a refusal either.
    expect((await run('a.b_c')).status).not.toBe(403);
  });
});
