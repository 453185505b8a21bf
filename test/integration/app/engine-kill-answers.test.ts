/**
 * Every request is answered when an engine process dies under it: the main engine's wire server
 * (FerretDB) or its PostgreSQL postmaster, and the same two of the private store (users, tokens,
 * sessions), each SIGKILLed at the moment a request's command leaves for it, round after round,
 * and started again at once, as the local runtime's supervisor does. Each request in flight gets
 * an answer within 30 s (done, or 503 with the JSON error body: never a 500), and afterwards every user's token works again: a look-up
 * that failed or hung with the engine is not kept. The same when an engine's wire server stops
 * answering altogether (SIGSTOP: alive, connections open, nothing said): the deadlines answer
 * then, and an insert's answer says what was and was not written.
 */
import { readFileSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { CommandStartedEvent, MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApp, uniqueName, type TestApp } from '../../support/app.js';
import {
  startPrivateMongo,
  startPrivateStore,
  type KillTarget,
  type PrivateMongo,
  type PrivateStore,
} from '../../support/private-mongo.js';
import { requestOnNewConnection } from '../../support/serve-process.js';
import { testServices } from '../../support/services.js';
import { until } from '../../support/until.js';

/** The goal: an answer within this long, whatever died. */
const ANSWER_LIMIT_MS = 30_000;
const ROUNDS = 5;
/** Shorter than the defaults, so that a silent engine's requests are answered well within the goal. */
const QUERY_TIME_LIMIT_MS = 10_000;
const OPERATION_TIMEOUT_MS = 5_000;
/** Past the API's account cache (2 s): every token needs the private store again. */
const ACCOUNT_CACHE_PAST_MS = 2_300;
const USERS = ['ann', 'bob', 'cat'];
const BATCH_RECORDS = 300;
/**
 * What a request may be answered while an engine dies: done, or 503 with the JSON error body
 * (the database unavailable, or too slow). A 500 would say the service did not know what happened.
 */
const ANSWERS = [200, 201, 503];

let main: PrivateMongo;
let store: PrivateStore;
let mainDir: string;
let storeDir: string;
let app: TestApp;
const tokens = new Map<string, string>();
const database = uniqueName('answers');
const collection = 'readings';
const path = `/api/data_store/data/${database}/${collection}/`;

beforeAll(async () => {
  const services = testServices();
  // Short: the private store's socket path must fit in 107 bytes.
  storeDir = await mkdtemp(join(tmpdir(), 'cc-ans-'));
  await chmod(storeDir, 0o711); // PostgreSQL runs as its own user and walks through
  mainDir = join(services.stateDir, uniqueName('answers-'));
  [main, store] = await Promise.all([
    startPrivateMongo({
      dir: mainDir,
      certDir: services.certDir,
      username: 'answers',
      password: `pw-${uniqueName('')}-${uniqueName('')}`,
    }),
    startPrivateStore({ dir: join(storeDir, 'store'), username: 'cybercom-api', password: `pw-${uniqueName('')}${uniqueName('')}` }),
  ]);
  const mainEnv = main.env();
  const storeEnv = store.env();
  // Command monitoring lets the test kill an engine as a request's command leaves for it.
  app = await startTestApp({
    ...mainEnv,
    ...storeEnv,
    MONGO_QUERY_TIME_LIMIT_MS: String(QUERY_TIME_LIMIT_MS),
    MONGO_OPERATION_TIMEOUT_MS: String(OPERATION_TIMEOUT_MS),
    MONGO_URI: `${mainEnv.MONGO_URI}?monitorCommands=true`,
    PRIVATE_MONGO_URI: `${storeEnv.PRIVATE_MONGO_URI}?monitorCommands=true`,
  });
  for (const [name, client] of driverClients()) recordMonitoring(name, client);
  for (const username of USERS) {
    await app.users.createUser({ username, password: `pw-${username}-answers-1`, isSuperuser: true });
    tokens.set(username, await app.users.tokenFor(username));
  }
  const token = tokens.get('ann') as string;
  expect((await call(app.url, 'POST', '/api/data_store/data/', { token, body: { database } })).status).toBe(201);
  expect((await call(app.url, 'POST', `/api/data_store/data/${database}/`, { token, body: { collection } })).status).toBe(201);
}, 240_000);

afterAll(async () => {
  await app?.close();
  await Promise.all([main?.stop(), store?.stop()]);
  if (storeDir !== undefined) await rm(storeDir, { recursive: true, force: true });
}, 120_000);

/** One request on a connection of its own, given up on (rejected) after the answer limit. */
function send(username: string, method: 'GET' | 'POST', url: string, body?: unknown) {
  return requestOnNewConnection(`${app.url}${url}`, {
    method,
    headers: { authorization: `Token ${tokens.get(username)}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    timeoutMs: ANSWER_LIMIT_MS,
  });
}

/**
 * Resolves once `client` sends a command `matches` accepts, right as it leaves; or after a few
 * seconds all the same (a round whose requests never reach that engine still kills it then).
 */
function commandLeaving(client: MongoClient, matches: (event: CommandStartedEvent) => boolean): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(fallback);
      client.off('commandStarted', listener);
      resolve();
    };
    const listener = (event: CommandStartedEvent) => {
      if (matches(event)) done();
    };
    const fallback = setTimeout(done, 3_000);
    client.on('commandStarted', listener);
  });
}

interface Engine {
  name: string;
  kill(target: KillTarget): Promise<void>;
  signal(target: KillTarget, signal: NodeJS.Signals): Promise<void>;
  restart(): Promise<void>;
  /** The command that, as it leaves, is the moment to kill: a request's work is then under way there. */
  trigger(): Promise<void>;
}

const engines = (): Engine[] => [
  {
    name: 'main engine',
    kill: (t) => main.kill(t),
    signal: (t, signal) => main.signal(t, signal),
    restart: () => main.restart(),
    trigger: () => commandLeaving(app.ctx.mongo, (e) => e.commandName === 'insert' && e.databaseName === database),
  },
  {
    name: 'private store',
    kill: (t) => store.kill(t),
    signal: (t, signal) => store.signal(t, signal),
    restart: () => store.restart(),
    trigger: () => commandLeaving(app.ctx.serviceDb.client, (e) => e.commandName === 'find' && e.command.find === 'authtoken_token'),
  },
];

type Outcome = { what: string; status: number; text: string; ms: number } | { what: string; error: string; ms: number };

/** The requests of one round: every user's token read, and inserts of a single record and of a batch. */
function requestsInFlight(round: string): Promise<Outcome>[] {
  const started = Date.now();
  const outcome = (what: string, answer: Promise<{ status: number; text: string }>): Promise<Outcome> =>
    answer.then(
      (a) => ({ what, status: a.status, text: a.text, ms: Date.now() - started }),
      (err: unknown) => ({ what, error: String(err), ms: Date.now() - started }),
    );
  const batch = Array.from({ length: BATCH_RECORDS }, (_, i) => ({ round, i }));
  return [
    ...USERS.map((u) => outcome(`GET as ${u}`, send(u, 'GET', `${path}?page_size=5`))),
    outcome('POST one', send('ann', 'POST', path, { round, single: true })),
    outcome('POST batch', send('bob', 'POST', path, batch)),
    outcome('GET databases', send('cat', 'GET', '/api/data_store/data/')),
  ];
}

/** The last lines of a log, for a failure message (the engines' own view of a recovery that did not come). */
function logTail(file: string, lines = 12): string {
  try {
    return `${file}:\n${readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n')}`;
  } catch (err) {
    return `${file}: ${String(err)}`;
  }
}

const engineLogs = (): string =>
  [
    join(mainDir, 'ferretdb.log'),
    join(mainDir, 'postgres', 'postgres.log'),
    join(storeDir, 'store', 'ferretdb.log'),
    join(storeDir, 'store', 'postgres', 'postgres.log'),
  ]
    .map((file) => logTail(file))
    .join('\n');

const driverClients = (): [string, MongoClient][] => [
  ['main engine', app.ctx.mongo],
  ['private store', app.ctx.serviceDb.client],
];

/** The last server-monitoring events of each driver client, for a failure message. */
const monitoring = new Map<string, string[]>();
const MONITORING_KEPT = 40;

function recordMonitoring(name: string, client: MongoClient): void {
  const events: string[] = [];
  monitoring.set(name, events);
  const note = (line: string) => {
    events.push(`${new Date().toISOString().slice(11, 23)} ${line}`);
    if (events.length > MONITORING_KEPT) events.shift();
  };
  client.on('serverHeartbeatStarted', () => note('heartbeat started'));
  client.on('serverHeartbeatSucceeded', (e) => note(`heartbeat succeeded in ${e.duration} ms`));
  client.on('serverHeartbeatFailed', (e) => note(`heartbeat failed: ${String(e.failure?.message ?? e.failure).slice(0, 120)}`));
  client.on('serverDescriptionChanged', (e) =>
    note(
      `server ${e.previousDescription.type} -> ${e.newDescription.type}${e.newDescription.error ? ` (${String(e.newDescription.error.message).slice(0, 120)})` : ''}`,
    ),
  );
  client.on('connectionPoolCleared', () => note('pool cleared'));
  client.on('connectionPoolReady', () => note('pool ready'));
}

/**
 * What the API's driver clients make of each engine: the server's state and last error, its
 * connection pool's counts, its monitor's state and the last monitoring events. Read from driver
 * internals, for a failure message only: it tells a client that gave up reconnecting from a pool
 * whose connections were never given back, and a monitor that stopped checking from one that
 * checks and fails.
 */
function driverState(): string {
  return driverClients()
    .map(([name, client]) => {
      const servers = (client as unknown as { topology?: { s?: { servers?: Map<string, any> } } }).topology?.s?.servers;
      const described = [...(servers?.values() ?? [])].map((server) => {
        const pool = server.pool;
        const monitor = server.monitor;
        return (
          `${server.description?.address}: ${server.description?.type}` +
          `${server.description?.error ? ` (${String(server.description.error.message).slice(0, 200)})` : ''}; ` +
          `pool ${pool?.poolState}, ${pool?.totalConnectionCount} connections, ${pool?.availableConnectionCount} available, ` +
          `${pool?.pendingConnectionCount} pending, ${pool?.currentCheckedOutCount} checked out, ${pool?.waitQueueSize} waiting; ` +
          `server state ${server.s?.state}; monitor state ${monitor?.s?.state}, connection ${monitor?.connection ? (monitor.connection.closed ? 'closed' : 'open') : 'none'}, ` +
          `interval ${JSON.stringify(monitor?.monitorId?.toJSON?.() ?? null)} in progress ${monitor?.monitorId?.isExecutionInProgress}`
        );
      });
      return `${name} client: ${described.join(' | ') || 'no servers'}\n  ${(monitoring.get(name) ?? []).join('\n  ')}`;
    })
    .join('\n');
}

/** Every user's token is served again once the engine is back: no look-up stays stuck. */
async function everyTokenServed(after: string): Promise<void> {
  for (const username of USERS) {
    // The last answer goes into the failure message: it says which layer still fails.
    let last = 'no answer yet';
    await until(
      async () => {
        const r = await send(username, 'GET', `${path}?page_size=1`).catch((err: unknown) => {
          last = `no answer: ${String(err)}`;
          return undefined;
        });
        if (r !== undefined) last = `${r.status} ${r.text.slice(0, 400)}`;
        return r?.status === 200 ? r : undefined;
      },
      60_000,
      () => `${username}'s token to be served again after ${after} (last answer: ${last})\n${driverState()}\n${engineLogs()}`,
      500,
    );
  }
}

const describeOutcomes = (outcomes: Outcome[]): string =>
  outcomes.map((o) => `${o.what}=${'status' in o ? o.status : 'none'}/${o.ms}ms`).join(', ');

describe('requests in flight when an engine process dies', () => {
  const cases = engines().flatMap((engine) => (['front', 'storage'] as KillTarget[]).map((target) => ({ engine: engine.name, target })));

  it.each(cases)(
    'are all answered within 30 s when the $engine $target is killed, and every token works again afterwards',
    async ({ engine: name, target }) => {
      const engine = engines().find((e) => e.name === name) as Engine;
      const faults: string[] = [];
      for (let round = 1; round <= ROUNDS; round++) {
        await sleep(ACCOUNT_CACHE_PAST_MS);
        let restartMs = 0;
        const killed = engine.trigger().then(async () => {
          await engine.kill(target);
          // Started again at once, as the supervisor does.
          const restarting = Date.now();
          await engine.restart().catch((err: unknown) => {
            throw new Error(`the ${name} did not start again after its ${target} was killed in round ${round}`, { cause: err });
          });
          restartMs = Date.now() - restarting;
        });
        const outcomes = await Promise.all(requestsInFlight(`${name}-${target}-${round}`));
        await killed;
        for (const o of outcomes) {
          if ('error' in o) faults.push(`round ${round}: ${o.what}: ${o.error}`);
          else if (!ANSWERS.includes(o.status)) faults.push(`round ${round}: ${o.what}: ${o.status} ${o.text.slice(0, 300)}`);
        }
        console.log(`[engine-kill-answers] ${name} ${target} round ${round} (restarted in ${restartMs} ms): ${describeOutcomes(outcomes)}`);
        await everyTokenServed(`round ${round}`);
      }
      expect(faults).toEqual([]);
    },
    600_000,
  );
});

describe('requests in flight when an engine stops answering', () => {
  it.each(['main engine', 'private store'])(
    'are answered by the deadlines when the %s front is stopped, and served again once it continues',
    async (name) => {
      const engine = engines().find((e) => e.name === name) as Engine;
      await sleep(ACCOUNT_CACHE_PAST_MS);
      // Stopped as a request's command leaves for it (on the main engine, the batch insert's):
      // that command is under way, unanswered.
      const leaving =
        name === 'main engine'
          ? commandLeaving(app.ctx.mongo, (e) => e.commandName === 'insert' && e.command.documents?.length === BATCH_RECORDS)
          : engine.trigger();
      const stopped = leaving.then(() => engine.signal('front', 'SIGSTOP'));
      let outcomes: Outcome[];
      try {
        outcomes = await Promise.all(requestsInFlight(`stopped-${name}`));
      } finally {
        await stopped;
        await engine.signal('front', 'SIGCONT');
      }
      console.log(`[engine-kill-answers] ${name} stopped: ${describeOutcomes(outcomes)}`);
      for (const o of outcomes) expect('status' in o ? o.status : o.error, o.what).toBeOneOf(ANSWERS);
      const batch = outcomes.find((o) => o.what === 'POST batch');
      if (name === 'main engine') {
        if (batch === undefined || !('status' in batch)) throw new Error('the batch insert was not answered');
        // The answer to the insert says which of its records were written, and which may have been.
        expect(batch.status, batch.text).toBe(503);
        const { detail } = JSON.parse(batch.text).error as {
          detail: { inserted_ids: unknown[]; inserted_count: number; failed_index: number; unconfirmed_ids?: unknown[] };
        };
        expect(detail.inserted_ids).toHaveLength(detail.inserted_count);
        expect(detail.failed_index).toBe(detail.inserted_count);
        expect(detail.inserted_count + (detail.unconfirmed_ids?.length ?? 0)).toBeLessThanOrEqual(BATCH_RECORDS);
      }
      await everyTokenServed(`the ${name} continued`);
    },
    120_000,
  );
});
