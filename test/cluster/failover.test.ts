/**
 * Broker failover on a three-node RabbitMQ cluster (quorum task queue), with two API instances
 * (the real `serve` command: API 1 with API_PROCESSES=2, API 2 with one process) and two
 * TypeScript workers: the node both API processes of API 1 are connected to is killed with
 * SIGKILL while 2,000 submissions go through both APIs. No submission the API accepted (202) may
 * be lost: each reaches SUCCESS (or would be visible as FAILURE); a task runs again only when it
 * was running on the killed connection. API 1 accepts submissions again within 10 s, each of its
 * processes reconnects to another node and accepts again (without being restarted), and the
 * worker that was connected to the killed node consumes from another one.
 */
import { randomBytes } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mongoEnvSchema, toMongoSettings } from '../../src/config/connections.js';
import { connectMongo } from '../../src/db/mongo-client.js';
import { DELIVERIES_FIELD } from '../../src/queue/results/result-store.js';
import { formatNaiveUtcIsoformat } from '../../src/queue/protocol/timestamps.js';
import { requestOnNewConnection } from '../support/serve-process.js';
import {
  BROKER_CONNECTED,
  BROKER_LOST,
  clusterServices,
  createSubmitter,
  killNode,
  spawnClusterWorker,
  startClusterApi,
  type ClusterApi,
  type ClusterNode,
  type ClusterWorker,
  type ServeLogLine,
} from './support.js';
import { until } from '../support/until.js';

const SUBMISSIONS = 2_000;
const IN_FLIGHT = 16;
/** The kill comes once this many submissions were accepted. */
const KILL_AFTER_ACCEPTED = 500;
const WORKER_CONCURRENCY = 4;
/** API 1's API processes, all connected to the node that is killed. */
const API1_PROCESSES = 2;

interface Outcome {
  api: number;
  /** Sent as X-Request-Id: the request log line of the process that answered names it. */
  requestId: string;
  status: number;
  code: string | undefined;
  taskId: string | undefined;
  /** A 503 whose publish may have reached the broker (its confirm was lost) names the task. */
  unconfirmedId: string | undefined;
  sentAt: number;
  answeredAt: number;
}

const id = randomBytes(4).toString('hex');
const serviceDatabase = `svc_cluster_${id}`;
const queue = `cluster-q-${id}`;
let apis: ClusterApi[] = [];
let workers: ClusterWorker[] = [];
const workerNames = [`cluster-a-${id}@localhost`, `cluster-b-${id}@localhost`];
let mongo: MongoClient;
let token: string;
let victim: ClusterNode;
let sequence = 0;

beforeAll(async () => {
  const cluster = clusterServices();
  victim = cluster.nodes[0] as ClusterNode;
  // Worker A and API 1 start on node 1 (the one killed), worker B on node 3, API 2 on node 2.
  // All at once; whatever started is stopped in afterAll even when something else failed.
  const [startedApis, startedWorkers] = await Promise.all([
    Promise.allSettled([
      startClusterApi({ serviceDatabase, firstNode: 0, processes: API1_PROCESSES }),
      startClusterApi({ serviceDatabase, firstNode: 1, processes: 1 }),
    ]),
    Promise.allSettled([
      spawnClusterWorker({
        nodeName: workerNames[0] as string,
        queue,
        resultDatabase: serviceDatabase,
        firstNode: 0,
        concurrency: WORKER_CONCURRENCY,
      }),
      spawnClusterWorker({
        nodeName: workerNames[1] as string,
        queue,
        resultDatabase: serviceDatabase,
        firstNode: 2,
        concurrency: WORKER_CONCURRENCY,
      }),
    ]),
  ]);
  apis = startedApis.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  workers = startedWorkers.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const failed = [...startedApis, ...startedWorkers].find((r) => r.status === 'rejected');
  if (failed !== undefined) throw failed.reason;
  token = await createSubmitter(serviceDatabase, 'runner');
  mongo = await connectMongo(toMongoSettings(mongoEnvSchema.parse(cluster.env)));
});

afterAll(async () => {
  workers.forEach((w) => w.process.terminate());
  await Promise.all(workers.map((w) => w.process.exited));
  await Promise.all(apis.map((a) => a.stop()));
  await mongo
    ?.db(serviceDatabase)
    .dropDatabase()
    .catch(() => undefined);
  await mongo?.close();
});

async function submit(api: number, n: number): Promise<Outcome> {
  const sentAt = Date.now();
  const requestId = `cluster-${id}-${sequence++}`;
  // A connection of its own: the kernel hands each to whichever of API 1's processes accepts it,
  // so both get a share (a kept-alive connection would stay with one process for the whole run).
  const response = await requestOnNewConnection(`${(apis[api] as ClusterApi).url}/api/queue/run/tasks.add/`, {
    method: 'POST',
    headers: { authorization: `Token ${token}`, 'content-type': 'application/json', 'x-request-id': requestId },
    body: JSON.stringify({ function: 'tasks.add', queue, args: [n, 1] }),
    // Never waits forever: a submission nobody answers fails the test.
    timeoutMs: 120_000,
  });
  let body: { task_id?: string; error?: { code?: string; detail?: { task_id?: string } } } = {};
  try {
    body = JSON.parse(response.text) as typeof body;
  } catch {
    // not JSON: status alone
  }
  return {
    api,
    requestId,
    status: response.status,
    code: body.error?.code,
    taskId: body.task_id,
    unconfirmedId: body.error?.detail?.task_id,
    sentAt,
    answeredAt: Date.now(),
  };
}

const logTime = (line: ServeLogLine): number => Date.parse(line.time ?? '');

/** Which process answered each request, by its X-Request-Id (from the request log lines). */
function answeredBy(api: ClusterApi): Map<string, number> {
  const by = new Map<string, number>();
  for (const line of api.lines())
    if (line.msg === 'request' && line.reqId !== undefined && line.pid !== undefined) by.set(line.reqId, line.pid);
  return by;
}

/** A process's broker connection log lines ("broker connected" with the address, "lost"), in order. */
function brokerEvents(api: ClusterApi, pid: number): ServeLogLine[] {
  return api.lines().filter((l) => l.pid === pid && (l.msg === BROKER_CONNECTED || l.msg === BROKER_LOST));
}

describe('RabbitMQ cluster failover', () => {
  it('loses no accepted submission when the API’s broker node is killed during 2,000 submissions', async () => {
    const api1 = apis[0] as ClusterApi;
    const workerA = workers[0] as ClusterWorker;
    // API 1 runs API1_PROCESSES processes, and each is connected to the node that will be killed.
    expect(new Set(api1.pids).size, api1.output()).toBe(API1_PROCESSES);
    for (const pid of api1.pids)
      expect(brokerEvents(api1, pid).at(-1), `API 1 process ${pid}'s broker connection`).toMatchObject({
        msg: BROKER_CONNECTED,
        node: victim.url,
      });
    expect(workerA.brokerAddress()).toBe(victim.url);

    let killedAt = Number.POSITIVE_INFINITY;

    const outcomes: Outcome[] = [];
    let next = 0;
    let accepted = 0;
    const client = async (): Promise<void> => {
      while (next < SUBMISSIONS) {
        const n = next++;
        const outcome = await submit(n % 2, n);
        outcomes.push(outcome);
        if (outcome.status === 202 && ++accepted === KILL_AFTER_ACCEPTED) {
          killedAt = Date.now();
          killNode(victim);
        }
      }
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, client));
    expect(killedAt).toBeLessThan(Number.POSITIVE_INFINITY);

    // API 1 accepts again: the first 202 of a submission sent to it after the kill, answered by
    // process `pid` (any process when absent).
    const firstAcceptedAfterKill = (pid?: number): Outcome | undefined => {
      const by = pid === undefined ? undefined : answeredBy(api1);
      return outcomes.find(
        (o) => o.api === 0 && o.status === 202 && o.sentAt >= killedAt && (by === undefined || by.get(o.requestId) === pid),
      );
    };
    await until(
      async () => {
        if (api1.pids.every((pid) => firstAcceptedAfterKill(pid) !== undefined)) return true;
        // Several at once, each on its own connection, so every process gets some.
        outcomes.push(...(await Promise.all(Array.from({ length: 4 }, () => submit(0, next++)))));
        return false;
      },
      60_000,
      'each API 1 process to accept a submission after the kill',
    );
    const recoveryMs = (firstAcceptedAfterKill() as Outcome).answeredAt - killedAt;
    // Every answer of API 1 is in its request log, so each names the process that gave it.
    await until(
      async () => {
        const by = answeredBy(api1);
        return outcomes.every((o) => o.api !== 0 || by.has(o.requestId)) || undefined;
      },
      30_000,
      'API 1 to log every request',
    );
    const by = answeredBy(api1);
    const perProcess = api1.pids.map((pid) => {
      const mine = outcomes.filter((o) => o.api === 0 && by.get(o.requestId) === pid);
      const events = brokerEvents(api1, pid);
      const reconnected = events.find((l) => l.msg === BROKER_CONNECTED && logTime(l) >= killedAt);
      return {
        pid,
        atKill: events.filter((l) => logTime(l) < killedAt).at(-1),
        lost: events.some((l) => l.msg === BROKER_LOST && logTime(l) >= killedAt),
        reconnected,
        reconnectedMs: reconnected === undefined ? undefined : logTime(reconnected) - killedAt,
        acceptedBefore: mine.filter((o) => o.status === 202 && o.answeredAt < killedAt).length,
        acceptedAfter: mine.filter((o) => o.status === 202 && o.sentAt >= killedAt).length,
        recoveryMs: (firstAcceptedAfterKill(pid)?.answeredAt ?? Number.NaN) - killedAt,
      };
    });
    const restarts = api1.lines().filter((l) => l.msg === 'API process ended; restarting it');

    const byStatus = new Map<string, number>();
    for (const o of outcomes)
      byStatus.set(`${o.status}${o.code ? ` ${o.code}` : ''}`, (byStatus.get(`${o.status}${o.code ? ` ${o.code}` : ''}`) ?? 0) + 1);
    const acceptedIds = outcomes.filter((o) => o.status === 202).map((o) => o.taskId as string);

    // Every accepted task reaches a final state; none stays PENDING.
    const results = mongo.db(serviceDatabase).collection<{ _id: string; status: string }>('tombstone');
    const finalCount = () => results.countDocuments({ _id: { $in: acceptedIds }, status: { $in: ['SUCCESS', 'FAILURE'] } });
    await until(
      async () => (await finalCount()) === acceptedIds.length || undefined,
      240_000,
      `all ${acceptedIds.length} accepted tasks to finish`,
    ).catch(async (err: Error) => {
      throw new Error(`${err.message}: ${await finalCount()} finished`);
    });
    const failed = await results.countDocuments({ _id: { $in: acceptedIds }, status: 'FAILURE' });
    // The history holds the accepted submissions and those whose confirm was lost (marked so),
    // nothing that was refused outright.
    const unconfirmedIds = outcomes.flatMap((o) => (o.status === 503 && o.unconfirmedId ? [o.unconfirmedId] : []));
    const history = mongo.db(serviceDatabase).collection<{ _id: string; publish_unconfirmed?: boolean }>('task_log');
    const historyCount = await history.countDocuments({});
    const acceptedMarkedUnconfirmed = await history.countDocuments({ _id: { $in: acceptedIds }, publish_unconfirmed: true });
    const unconfirmedMarked = await history.countDocuments({ _id: { $in: unconfirmedIds }, publish_unconfirmed: true });
    const ranTwice = await results.countDocuments({ _id: { $in: acceptedIds }, [`${DELIVERIES_FIELD}.r0`]: { $gt: 1 } });
    // Tasks each worker finished after the kill (date_done is Celery's naive UTC isoformat).
    const afterKill = formatNaiveUtcIsoformat(new Date(killedAt + 1));
    const finishedAfterKill = await Promise.all(
      workerNames.map((worker) =>
        results.countDocuments({ _id: { $in: acceptedIds }, status: 'SUCCESS', worker, date_done: { $gt: afterKill } }),
      ),
    );

    const refused = outcomes.filter((o) => o.status !== 202 && o.status !== 503);
    const window = (list: Outcome[]): string =>
      list.length === 0
        ? 'none'
        : `${Math.min(...list.map((o) => o.sentAt - killedAt))}..${Math.max(...list.map((o) => o.answeredAt - killedAt))} ms after the kill`;
    for (const p of perProcess)
      console.log(
        `[cluster] API 1 process ${p.pid}: on ${p.atKill?.node ?? 'nothing'} at the kill, ${p.acceptedBefore} accepted before it; ` +
          `${p.lost ? 'lost its connection' : 'never lost its connection'}, reconnected to ${p.reconnected?.node ?? 'nothing'} ${p.reconnectedMs ?? '-'} ms after the kill, ` +
          `accepted again ${p.recoveryMs} ms after the kill (${p.acceptedAfter} accepted after it)`,
      );
    console.log(
      `[cluster] refused other than 503: API 1 ${refused.filter((o) => o.api === 0).length}, API 2 ${refused.filter((o) => o.api === 1).length}, ${window(refused)}; ` +
        `503: ${window(outcomes.filter((o) => o.status === 503))}`,
    );
    console.log(
      `[cluster] ${outcomes.length} submissions: ${[...byStatus].map(([k, v]) => `${v}× ${k}`).join(', ')}; ` +
        `API 1 accepted again ${recoveryMs} ms after the kill; ${acceptedIds.length} accepted, ${failed} FAILURE, ${ranTwice} started twice; ` +
        `${unconfirmedIds.length} answered 503 with a lost confirm; history ${historyCount} entries; ` +
        `finished after the kill: worker A ${finishedAfterKill[0]}, worker B ${finishedAfterKill[1]}; worker A now on ${workerA.brokerAddress()} (ready ${workerA.readyCount()} times)`,
    );

    // Only accepted or "broker unavailable" answers, never a 5xx of another kind.
    for (const o of outcomes) expect([202, 503], `status ${o.status} ${o.code ?? ''}`).toContain(o.status);
    expect(new Set(acceptedIds).size).toBe(acceptedIds.length);
    expect(acceptedIds.length).toBeGreaterThan(KILL_AFTER_ACCEPTED);
    expect(failed).toBe(0);
    expect(historyCount).toBe(acceptedIds.length + unconfirmedIds.length);
    expect(acceptedMarkedUnconfirmed).toBe(0);
    expect(unconfirmedMarked).toBe(unconfirmedIds.length);
    // A second start only for a task running on worker A's connection when its node died.
    expect(ranTwice).toBeLessThanOrEqual(WORKER_CONCURRENCY);
    expect(recoveryMs).toBeLessThan(10_000);
    // Each API process of API 1 served submissions on the killed node, lost it, moved to another
    // node and accepted again, without the primary restarting it.
    expect(restarts).toEqual([]);
    for (const p of perProcess) {
      const what = `API 1 process ${p.pid}`;
      expect(p.atKill, what).toMatchObject({ msg: BROKER_CONNECTED, node: victim.url });
      expect(p.acceptedBefore, what).toBeGreaterThan(0);
      expect(p.lost, what).toBe(true);
      expect(p.reconnected?.node, what).toBeDefined();
      expect(p.reconnected?.node, what).not.toBe(victim.url);
      expect(p.acceptedAfter, what).toBeGreaterThan(0);
    }
    // The worker that lost its node consumes from another one; the other never stopped.
    expect(workerA.readyCount()).toBeGreaterThan(1);
    expect(workerA.brokerAddress()).not.toBeNull();
    expect(workerA.brokerAddress()).not.toBe(victim.url);
    expect(finishedAfterKill[0]).toBeGreaterThan(0);
    expect(finishedAfterKill[1]).toBeGreaterThan(0);
  });
});
