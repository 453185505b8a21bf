/**
 * Exports whose clients stop reading, against the real `serve` process (its memory measured on
 * its own) and the suite's engine. Raw sockets send the request, take the first bytes, then read
 * nothing more (or only a little now and then). They must not pin the API's memory without bound:
 * each user may stream only so many at once (429 beyond), a stream that the client takes nothing
 * of for the send timeout is cut off and its cursor closed, and 16 stalled exports at once leave
 * the API process less than 100 MB larger than it was.
 */
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiExecArgv, apiProcessEnv } from '../../../src/config/api-memory.js';
import { createServiceContext } from '../../../src/app/service-context.js';
import { createLogger } from '../../../src/log/logger.js';
import { call, serviceDatabaseName, testSettings, uniqueName } from '../../support/app.js';
import { spawnServe, type ServeProcess } from '../../support/serve-process.js';
import { until } from '../../support/until.js';

/** The send timeout the API runs with here: long enough to measure the stalled streams first. */
const SEND_TIMEOUT_S = 15;
const PER_USER = 2;
const USERS = 8;
/** 16 stalled exports: every user's whole share. */
const STALLED = USERS * PER_USER;
/** About 40 MB of records: far more than the socket buffers and several of the engine's batches. */
const RECORDS = 20_000;
const RECORD_BYTES = 2_000;
const GROWTH_LIMIT_MB = 100;

const database = uniqueName('stalled');
const collection = 'big';
const exportPath = `/api/data_store/data/${database}/${collection}/?format=ndjson`;
let serve: ServeProcess;
let baseUrl: string;
let apiPid: number;
const tokens: string[] = [];

/** The resident memory of one process, in MB. */
async function rssMb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

beforeAll(async () => {
  const serviceDatabase = serviceDatabaseName();
  const settings = testSettings({ SERVICE_DATABASE: serviceDatabase });
  const ctx = await createServiceContext(settings, createLogger('silent'));
  try {
    for (let i = 0; i < USERS; i++) {
      await ctx.auth.users.createUser({ username: `reader${i}`, password: `pw-reader-${i}-stalled`, isSuperuser: true });
      tokens.push(await ctx.auth.users.tokenFor(`reader${i}`));
    }
  } finally {
    await ctx.close();
  }
  serve = await spawnServe({
    SERVICE_DATABASE: serviceDatabase,
    API_PROCESSES: '1',
    METRICS_ENABLED: 'false',
    STREAMED_READS_PER_USER: String(PER_USER),
    STREAM_SEND_TIMEOUT_S: String(SEND_TIMEOUT_S),
    // The memory settings an installation gives the API.
    NODE_OPTIONS: apiExecArgv([]).join(' '),
    ...apiProcessEnv({}),
  });
  baseUrl = await serve.listening(120_000);
  apiPid = serve.lines().find((l) => l.msg === 'API server listening')?.pid as number;
  const token = tokens[0] as string;
  expect((await call(baseUrl, 'POST', '/api/data_store/data/', { token, body: { database } })).status).toBe(201);
  expect((await call(baseUrl, 'POST', `/api/data_store/data/${database}/`, { token, body: { collection } })).status).toBe(201);
  const filler = 'x'.repeat(RECORD_BYTES);
  for (let start = 0; start < RECORDS; start += 1_000) {
    const batch = Array.from({ length: 1_000 }, (_, i) => ({ n: start + i, filler }));
    const inserted = await call(baseUrl, 'POST', `/api/data_store/data/${database}/${collection}/`, { token, body: batch });
    expect(inserted.status, inserted.text).toBe(201);
  }
}, 300_000);

afterAll(async () => {
  await serve?.kill();
});

/** A client that sends the request, takes the first bytes of the answer and then reads nothing. */
interface StalledReader {
  /** Its X-Request-Id, which the API's log lines name. */
  id: string;
  socket: Socket;
  received: number;
  /** Whether the connection has ended (seen once the reader reads again). */
  closed: boolean;
  /** Reads whatever has arrived, then stops reading again. */
  takeSome(): void;
}

async function stalledReader(token: string): Promise<StalledReader> {
  const url = new URL(baseUrl);
  const socket = connect(Number(url.port), url.hostname);
  const reader: StalledReader = {
    id: uniqueName('stalled-'),
    socket,
    received: 0,
    closed: false,
    takeSome() {
      socket.once('data', () => socket.pause());
      socket.resume();
    },
  };
  socket.on('data', (chunk: Buffer) => (reader.received += chunk.length));
  socket.on('close', () => (reader.closed = true));
  socket.on('error', () => undefined);
  const headers = [`Host: ${url.host}`, `Authorization: Token ${token}`, 'Accept: application/x-ndjson', `X-Request-Id: ${reader.id}`];
  socket.write(`GET ${exportPath} HTTP/1.1\r\n${headers.join('\r\n')}\r\n\r\n`);
  const [first] = (await once(socket, 'data')) as [Buffer];
  socket.pause();
  expect(first.toString('latin1')).toMatch(/^HTTP\/1\.1 200/);
  return reader;
}

describe('exports whose clients stop reading', () => {
  it('are capped per user, cut off after the send timeout, and 16 of them stay under +100 MB of API memory', async () => {
    // A whole export read once first: the API has then run (and compiled) everything an export needs.
    const warmUp = await fetch(`${baseUrl}${exportPath}`, { headers: { authorization: `Token ${tokens[0]}` } });
    expect(warmUp.status).toBe(200);
    expect((await warmUp.text()).split('\n').filter((line) => line.length > 0)).toHaveLength(RECORDS);
    await sleep(3_000);
    const before = await rssMb(apiPid);

    const readers: StalledReader[] = [];
    for (let i = 0; i < STALLED; i++) readers.push(await stalledReader(tokens[i % USERS] as string));
    const tricklers = readers.slice(0, 2);
    // Two of them take a little now and then, more slowly than the send timeout allows.
    const trickle = setInterval(() => tricklers.forEach((r) => r.takeSome()), (SEND_TIMEOUT_S + 5) * 1000);
    try {
      // Each stream has filled the socket buffers and waits for its client by now.
      await sleep(4_000);
      const samples: number[] = [];
      for (let i = 0; i < 4; i++) {
        samples.push(await rssMb(apiPid));
        await sleep(500);
      }
      const stalled = Math.max(...samples);
      console.log(`[stalled-exports] API RSS ${before.toFixed(0)} MB before, ${stalled.toFixed(0)} MB with ${STALLED} stalled exports`);
      expect(stalled - before).toBeLessThan(GROWTH_LIMIT_MB);

      // The user's share is taken: one more export is refused without touching the engine.
      const refused = await call(baseUrl, 'GET', exportPath, { token: tokens[0], accept: 'application/x-ndjson' });
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(refused.json.error).toMatchObject({ status: 429, code: 'too_many_streamed_reads', detail: { limit: PER_USER } });

      // Past the send timeout the stalled streams are cut off (each from when it began to wait
      // for its client, which a busy engine may delay): the API says so for each of them...
      const cutOff = (reader: StalledReader) =>
        serve.lines().some((l) => l.reqId === reader.id && l.msg === 'streamed response ended early');
      await until(
        () => readers.every(cutOff),
        (SEND_TIMEOUT_S + 45) * 1000,
        () => `every stalled export to be cut off; not yet: ${readers.filter((r) => !cutOff(r)).length}`,
        500,
      );
      // ...their slots are free again, so the same user exports again...
      const again = await until(
        async () => {
          const r = await fetch(`${baseUrl}${exportPath}`, { headers: { authorization: `Token ${tokens[0]}` } });
          if (r.status === 429) {
            await r.body?.cancel();
            return undefined;
          }
          return r;
        },
        (SEND_TIMEOUT_S + 30) * 1000,
        'a slot of the stalled exports to be freed',
        1_000,
      );
      expect(again.status).toBe(200);
      const whole = await again.text();
      expect(whole.split('\n').filter((line) => line.length > 0)).toHaveLength(RECORDS);
      // ...and each stalled client, reading again, finds its connection ended and the export short.
      for (const reader of readers) reader.socket.resume();
      await until(() => readers.every((r) => r.closed), 30_000, 'every stalled connection to end');
      for (const reader of readers) expect(reader.received).toBeLessThan(Buffer.byteLength(whole));
    } finally {
      clearInterval(trickle);
      for (const reader of readers) reader.socket.destroy();
    }
  }, 240_000);
});
