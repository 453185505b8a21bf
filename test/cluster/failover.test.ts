/**
 * Broker failover on a three-node RabbitMQ cluster (quorum task queue), with two API instances
 * and two TypeScript workers: the node the first API is connected to is killed with SIGKILL
 * while 2,000 submissions go through both APIs. No submission the API accepted (202) may be
 * lost: each reaches SUCCESS (or would be visible as FAILURE); a task runs again only when it was
 * running on the killed connection. The API accepts submissions again within 10 s, and the
 * worker that was connected to the killed node consumes from another one.
 */
import { randomBytes } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mongoEnvSchema, toMongoSettings } from '../../src/config/connections.js';
import { connectMongo } from '../../src/db/mongo-client.js';
import { DELIVERIES_FIELD } from '../../src/queue/results/result-store.js';
import { formatNaiveUtcIsoformat } from '../../src/queue/protocol/timestamps.js';
import {
  clusterServices,
  killNode,
  spawnClusterWorker,
  startApi,
  until,
  type ApiInstance,
  type ClusterNode,
  type ClusterWorker,
} from './support.js';

const SUBMISSIONS = 2_000;
const IN_FLIGHT = 16;
/** The kill comes once this many submissions were accepted. */
const KILL_AFTER_ACCEPTED = 500;
const WORKER_CONCURRENCY = 4;

interface Outcome {
  api: number;
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
let apis: ApiInstance[] = [];
let workers: ClusterWorker[] = [];
const workerNames = [`cluster-a-${id}@localhost`, `cluster-b-${id}@localhost`];
let mongo: MongoClient;
let token: string;
let victim: ClusterNode;

beforeAll(async () => {
  const cluster = clusterServices();
  victim = cluster.nodes[0] as ClusterNode;
  // Worker A and API 1 start on node 1 (the one killed), worker B on node 3, API 2 on node 2.
  workers = await Promise.all([
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
  ]);
  apis = [await startApi(serviceDatabase, 0), await startApi(serviceDatabase, 1)];
  for (const api of apis) await until(async () => api.ctx.queue?.session.connected, 30_000, 'the API to reach the broker');
  const api1 = apis[0] as ApiInstance;
  await api1.ctx.auth.users.createUser({ username: 'runner', password: 'pw-runner-123', permissions: ['cybercom_queue.task.tasks.add'] });
  token = await api1.ctx.auth.users.tokenFor('runner');
  mongo = await connectMongo(toMongoSettings(mongoEnvSchema.parse(cluster.env)));
});

afterAll(async () => {
  workers.forEach((w) => w.process.terminate());
  await Promise.all(workers.map((w) => w.process.exited));
  await Promise.all(apis.map((a) => a.close()));
  await mongo
    ?.db(serviceDatabase)
    .dropDatabase()
    .catch(() => undefined);
  await mongo?.close();
});

async function submit(api: number, n: number): Promise<Outcome> {
  const sentAt = Date.now();
  const response = await fetch(`${(apis[api] as ApiInstance).url}/api/queue/run/tasks.add/`, {
    method: 'POST',
    headers: { authorization: `Token ${token}`, 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ function: 'tasks.add', queue, args: [n, 1] }),
  });
  const body = (await response.json().catch(() => ({}))) as { task_id?: string; error?: { code?: string; detail?: { task_id?: string } } };
  return {
    api,
    status: response.status,
    code: body.error?.code,
    taskId: body.task_id,
    unconfirmedId: body.error?.detail?.task_id,
    sentAt,
    answeredAt: Date.now(),
  };
}

describe('RabbitMQ cluster failover', () => {
  it('loses no accepted submission when the API’s broker node is killed during 2,000 submissions', async () => {
    const api1 = apis[0] as ApiInstance;
    const workerA = workers[0] as ClusterWorker;
    expect(api1.ctx.queue?.session.address).toBe(victim.url);
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

    // API 1 accepts again: the first 202 of a submission sent to it after the kill.
    const firstAcceptedAfterKill = (): Outcome | undefined => outcomes.find((o) => o.api === 0 && o.status === 202 && o.sentAt >= killedAt);
    await until(
      async () => {
        if (firstAcceptedAfterKill() !== undefined) return true;
        outcomes.push(await submit(0, outcomes.length));
        return false;
      },
      60_000,
      'API 1 to accept a submission after the kill',
    );
    const recoveryMs = (firstAcceptedAfterKill() as Outcome).answeredAt - killedAt;

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
    // The worker that lost its node consumes from another one; the other never stopped.
    expect(workerA.readyCount()).toBeGreaterThan(1);
    expect(workerA.brokerAddress()).not.toBeNull();
    expect(workerA.brokerAddress()).not.toBe(victim.url);
    expect(finishedAfterKill[0]).toBeGreaterThan(0);
    expect(finishedAfterKill[1]).toBeGreaterThan(0);
  });
});
