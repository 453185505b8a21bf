/**
 * An array insert whose database command fails part-way must report exactly the records that
 * were written: the connection to the database is cut (through a relay the test controls) in the
 * middle of the insert command, after the database answered it, or for longer than the API waits.
 * A larger array goes as several commands of about INSERT_COMMAND_BYTES, one after another: it
 * is all stored in order, and when a later command fails (cut, its answer lost, a duplicate
 * `_id`) the answer names the earlier commands' records too, and nothing after the failure is
 * written.
 */
import type { CommandStartedEvent } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INSERT_COMMAND_BYTES, recordsPerCommand } from '../../../src/documents/batch-insert.js';
import { call, monitoredUri, startTestApp, type TestApp } from '../../support/app.js';
import { TcpProxy, withPort } from '../../support/tcp-proxy.js';
import { testServices } from '../../support/services.js';

let app: TestApp;
let proxy: TcpProxy;
let token: string;
let db: string;

/** Past this many bytes the relay cuts: inside an insert of ≈ 700 kB (one command), far larger than anything else on the connection. */
const BATCH_BYTES_THRESHOLD = 512 * 1024;
/** Records of about 1 kB: 700 of them (≈ 0.7 MB) are one insert command. */
const records = (n: number, tag: string) => Array.from({ length: n }, (_, i) => ({ tag, i, pad: 'x'.repeat(1000) }));
const ONE_COMMAND = 700;
/** Records of about 1 kB with ids of their own, enough for four insert commands. */
const MANY = 4000;
const named = (tag: string) => Array.from({ length: MANY }, (_, i) => ({ _id: `${tag}-${i}`, tag, i, pad: 'x'.repeat(1000) }));
/** How many records each command of `body` carries, as the API splits it (by the length of the body's JSON text). */
const perCommand = (body: unknown[]) => recordsPerCommand(body.length, JSON.stringify(body).length);

async function countTagged(col: string, tag: string): Promise<number> {
  const query = encodeURIComponent(JSON.stringify({ filter: { tag } }));
  const res = await call(app.url, 'GET', `/api/data_store/data/${db}/${col}/?query=${query}&page_size=1`, { token });
  expect(res.status).toBe(200);
  return res.json.count as number;
}

beforeAll(async () => {
  const services = testServices();
  proxy = await new TcpProxy(services.mongo.port).start();
  app = await startTestApp({ MONGO_URI: monitoredUri(withPort(services.env.MONGO_URI as string, proxy.port)) });
  await app.users.createUser({ username: 'root', password: 'pw-superuser-1', isSuperuser: true });
  token = await app.users.tokenFor('root');
  db = `${app.prefix}batch`;
  expect((await call(app.url, 'POST', '/api/data_store/data/', { token, body: { database: db } })).status).toBe(201);
  for (const collection of [
    'cut_request',
    'cut_reply',
    'typed_ids',
    'cut_long',
    'dupes',
    'decimals',
    'many',
    'many_cut',
    'many_reply',
    'many_dupe',
  ]) {
    expect((await call(app.url, 'POST', `/api/data_store/data/${db}/`, { token, body: { collection } })).status).toBe(201);
  }
});

afterAll(async () => {
  await app?.close();
  await proxy?.close();
});

describe('an array insert that fails part-way', () => {
  it('reports no ids when the command was cut before the database had all of it', async () => {
    proxy.dropOnce('request', BATCH_BYTES_THRESHOLD);
    const res = await call(app.url, 'POST', `/api/data_store/data/${db}/cut_request/`, { token, body: records(ONE_COMMAND, 'cut') });
    expect(res.status).toBe(503);
    expect(res.json.error.code).toBe('database_unavailable');
    expect(res.json.error.detail.inserted_ids).toEqual([]);
    expect(res.json.error.detail.inserted_count).toBe(0);
    expect(res.json.error.detail.failed_index).toBe(0);
    expect(await countTagged('cut_request', 'cut')).toBe(0);
  });

  it('reports every id when the database wrote them all and only its answer was lost', async () => {
    proxy.dropOnce('reply', BATCH_BYTES_THRESHOLD);
    const res = await call(app.url, 'POST', `/api/data_store/data/${db}/cut_reply/`, { token, body: records(ONE_COMMAND, 'done') });
    expect(res.status).toBe(503);
    expect(res.json.error.detail.inserted_count).toBe(ONE_COMMAND);
    expect(res.json.error.detail.inserted_ids).toHaveLength(ONE_COMMAND);
    expect(res.json.error.detail.unconfirmed_ids).toBeUndefined();
    expect(await countTagged('cut_reply', 'done')).toBe(ONE_COMMAND);
    // The ids reported are the stored records' ids.
    const first = res.json.error.detail.inserted_ids[0] as string;
    expect((await call(app.url, 'GET', `/api/data_store/data/${db}/cut_reply/${first}/`, { token })).json.i).toBe(0);
  });

  it('reports every id when only the answer was lost, whatever the type of the ids', async () => {
    // Each type as the body gives it and as the database gives it back differ in JavaScript: an
    // int64 is a Long in the body and a number when read back (within 2^53) or a Long again
    // (beyond); a whole double is a Double in the body and a number when read back.
    const idOf = (i: number): unknown => {
      const n = Math.floor(i / 8);
      switch (i % 8) {
        case 0:
          return n; // int32
        case 1:
          return { $numberDouble: String(100_000 + n) }; // a whole double
        case 2:
          return 200_000 + n + 0.5; // a fraction
        case 3:
          return { $numberLong: String(5_000_000_000 + n) }; // int64 within 2^53
        case 4:
          return 6_000_000_000 + n; // an integer literal beyond int32, made an int64
        case 5:
          return { $numberLong: (2n ** 60n + BigInt(n)).toString() }; // int64 beyond 2^53
        case 6:
          return { $oid: n.toString(16).padStart(24, '0') };
        default:
          return i % 16 === 7 ? `s-${n}` : { $date: new Date(Date.UTC(2020, 0, 1) + n * 1000).toISOString() };
      }
    };
    const body = records(ONE_COMMAND, 'typed').map((record, i) => ({ _id: idOf(i), ...record }));
    proxy.dropOnce('reply', BATCH_BYTES_THRESHOLD);
    const res = await call(app.url, 'POST', `/api/data_store/data/${db}/typed_ids/`, { token, body });
    expect(res.status, JSON.stringify(res.json).slice(0, 300)).toBe(503);
    expect(res.json.error.detail.unconfirmed_ids).toBeUndefined();
    expect(res.json.error.detail.inserted_count, JSON.stringify(res.json.error.detail.inserted_ids.slice(0, 10))).toBe(ONE_COMMAND);
    expect(res.json.error.detail.inserted_ids).toHaveLength(ONE_COMMAND);
    expect(await countTagged('typed_ids', 'typed')).toBe(ONE_COMMAND);
  });

  it('says which ids are unconfirmed when the database cannot be asked afterwards', async () => {
    // Down for longer than the API keeps asking.
    proxy.dropOnce('request', BATCH_BYTES_THRESHOLD, 10_000);
    const res = await call(app.url, 'POST', `/api/data_store/data/${db}/cut_long/`, { token, body: records(ONE_COMMAND, 'long') });
    expect(res.status, JSON.stringify(res.json).slice(0, 600)).toBe(503);
    expect(res.json.error.detail.inserted_ids).toEqual([]);
    expect(res.json.error.detail.unconfirmed_ids, JSON.stringify(res.json.error).slice(0, 600)).toHaveLength(ONE_COMMAND);
    await new Promise((r) => setTimeout(r, 10_500));
    expect(await countTagged('cut_long', 'long')).toBe(0);
  }, 40_000);

  it('still reports the exact prefix when the database refuses one record', async () => {
    expect((await call(app.url, 'POST', `/api/data_store/data/${db}/dupes/`, { token, body: { _id: 'c' } })).status).toBe(201);
    const res = await call(app.url, 'POST', `/api/data_store/data/${db}/dupes/`, {
      token,
      body: [{ _id: 'a' }, { _id: 'b' }, { _id: 'c' }, { _id: 'd' }],
    });
    expect(res.status).toBe(409);
    expect(res.json.error.detail).toEqual({ inserted_ids: ['a', 'b'], inserted_count: 2, failed_index: 2 });
  });

  it('reports exactly the stored records for a batch with a $numberDecimal value', async () => {
    const body = [
      { _id: 'x1', n: 1 },
      { _id: 'x2', n: { $numberDecimal: '1.5' } },
      { _id: 'x3', n: 3 },
    ];
    const res = await call(app.url, 'POST', `/api/data_store/data/${db}/decimals/`, { token, body });
    const stored = await call(app.url, 'GET', `/api/data_store/data/${db}/decimals/?page_size=0`, { token });
    const storedIds = (stored.json.results as { _id: string }[]).map((r) => r._id).sort();
    expect(res.status, JSON.stringify(res.json)).toBeLessThan(500);
    const reported = res.status === 201 ? res.json.inserted_ids : res.json.error.detail.inserted_ids;
    expect([...reported].sort()).toEqual(storedIds);
  });
});

describe('an array larger than one insert command', () => {
  /** The insert commands the API's database client sends while `action` runs. */
  async function insertsDuring(action: () => Promise<unknown>): Promise<number> {
    let inserts = 0;
    const listener = (event: CommandStartedEvent) => {
      if (event.commandName === 'insert') inserts += 1;
    };
    app.ctx.mongo.on('commandStarted', listener);
    try {
      await action();
    } finally {
      app.ctx.mongo.off('commandStarted', listener);
    }
    return inserts;
  }

  it('goes as commands of about INSERT_COMMAND_BYTES and stores every record in order', async () => {
    const body = named('many');
    const size = perCommand(body);
    expect(size).toBeLessThan(MANY);
    let res: Awaited<ReturnType<typeof call>> | undefined;
    const inserts = await insertsDuring(async () => {
      res = await call(app.url, 'POST', `/api/data_store/data/${db}/many/`, { token, body });
    });
    expect(res?.status, JSON.stringify(res?.json).slice(0, 300)).toBe(201);
    expect(res?.json.inserted_ids).toEqual(body.map((r) => r._id));
    expect(inserts).toBe(Math.ceil(MANY / size));
    expect(Math.ceil(JSON.stringify(body).length / inserts)).toBeLessThanOrEqual(INSERT_COMMAND_BYTES + 2000);
    expect(await countTagged('many', 'many')).toBe(MANY);
  });

  it("reports exactly the first command's records when the second is cut before the database had all of it", async () => {
    const body = named('cut');
    const size = perCommand(body);
    // Half-way through the second command (the first is about INSERT_COMMAND_BYTES of BSON).
    proxy.dropOnce('request', Math.round(INSERT_COMMAND_BYTES * 1.5));
    const res = await call(app.url, 'POST', `/api/data_store/data/${db}/many_cut/`, { token, body });
    expect(res.status, JSON.stringify(res.json).slice(0, 300)).toBe(503);
    expect(res.json.error.detail).toEqual({
      inserted_ids: body.slice(0, size).map((r) => r._id),
      inserted_count: size,
      failed_index: size,
    });
    expect(await countTagged('many_cut', 'cut')).toBe(size);
  });

  it('reports the records of both commands when the answer to the second was lost, and sends no third', async () => {
    const body = named('lost');
    const size = perCommand(body);
    proxy.dropOnce('reply', Math.round(INSERT_COMMAND_BYTES * 1.5));
    const res = await call(app.url, 'POST', `/api/data_store/data/${db}/many_reply/`, { token, body });
    expect(res.status, JSON.stringify(res.json).slice(0, 300)).toBe(503);
    expect(res.json.error.detail).toEqual({
      inserted_ids: body.slice(0, 2 * size).map((r) => r._id),
      inserted_count: 2 * size,
      failed_index: 2 * size,
    });
    expect(await countTagged('many_reply', 'lost')).toBe(2 * size);
  });

  it('reports the prefix across commands when a later command meets a duplicate _id', async () => {
    const body = named('dupe');
    const size = perCommand(body);
    const at = 2 * size + 5;
    // A record of the third command that is already stored.
    expect((await call(app.url, 'POST', `/api/data_store/data/${db}/many_dupe/`, { token, body: { _id: `dupe-${at}` } })).status).toBe(201);
    const res = await call(app.url, 'POST', `/api/data_store/data/${db}/many_dupe/`, { token, body });
    expect(res.status, JSON.stringify(res.json).slice(0, 300)).toBe(409);
    expect(res.json.error.code).toBe('duplicate_key');
    expect(res.json.error.detail).toEqual({ inserted_ids: body.slice(0, at).map((r) => r._id), inserted_count: at, failed_index: at });
    expect(await countTagged('many_dupe', 'dupe')).toBe(at);
  });
});
