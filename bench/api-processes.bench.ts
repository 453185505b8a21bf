/**
 * API processes benchmark. Prints numbers and ratios; asserts nothing.
 * The same `serve` with API_PROCESSES=1 (one process, the baseline) and then API_PROCESSES=2
 * (a primary and two worker processes on the one port), same database, broker and machine:
 *   (r) GET /api/ anonymously, answered without the database or the broker, concurrency 32:
 *       what the API processes alone can do
 *   (d) GET one record by its _id (/<db>/<col>/<id>/), concurrency 16
 *   (s) task submissions through POST /api/queue/run/tasks.noop/ (202 after the publisher
 *       confirm), concurrency 32
 * Both APIs run side by side and the measured runs alternate (1, 2, 2, 1, half the budget each),
 * so a shared machine's changing load weighs on both alike. A TypeScript worker runs only while
 * the APIs learn the task list (warm-up); it is stopped before the measured runs so it takes no
 * CPU from the API (submissions then wait in the queue, which is purged after each run). Each
 * comparison stops after --requests or --seconds, whichever comes first.
 * Each run also prints where all cores' CPU time went (API, database, broker, load generator, idle).
 * Usage: npm run bench:processes [-- --requests 4000 --seconds 30 --processes 2]
 */
import type { ChildProcess } from 'node:child_process';
import { availableParallelism, loadavg } from 'node:os';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { startLocalServices } from '../src/local-services/services.js';
import { connectMongo } from '../src/db/mongo-client.js';
import { connectBroker } from '../src/queue/connection/broker-connection.js';
import { declareTaskQueue } from '../src/queue/protocol/entities.js';
import { loadSettings } from '../src/config/settings.js';
import { createLogger } from '../src/log/logger.js';
import { createServiceContext } from '../src/app/service-context.js';
import { freePort } from '../src/local-services/ports.js';
import { runLoad, type LoadResult, type RequestSpec } from './load.js';
import { benchServiceEnv, startChild, stop, installedApi } from './processes.js';
import { cpuShares, cpuSnapshot } from './cpu-share.js';

const { values: args } = parseArgs({
  options: {
    requests: { type: 'string', default: '4000' },
    seconds: { type: 'string', default: '30' },
    processes: { type: 'string', default: '2' },
  },
});
const REQUESTS = Number(args.requests);
const BUDGET_MS = Number(args.seconds) * 1000;
const SCALED = Number(args.processes);
const SERVICE_DB = 'bench_processes';
const DB = 'bench';
const COL = 'processes';
const RECORDS = 10_000;
const QUEUE = 'bench-processes';

function line(name: string, r: LoadResult): string {
  return `${name.padEnd(44)} ${r.rps.toFixed(0).padStart(6)} req/s  p50 ${r.p50ms.toFixed(1).padStart(6)} ms  p99 ${r.p99ms.toFixed(1).padStart(7)} ms  n ${r.requests}  errors ${r.errors}`;
}

async function waitFor(probe: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function main(): Promise<void> {
  process.stdout.write('Starting services (state in .state/bench)...\n');
  const services = await startLocalServices({ stateDir: '.state/bench', reuseCertificates: true });
  // The task list is learnt once per process during the warm-up and kept for the whole run.
  const env = benchServiceEnv(services.env(), SERVICE_DB, { TASK_LIST_CACHE_S: '3600' });
  const settings = loadSettings(env);
  const mongo = await connectMongo(settings.mongo);
  const broker = await connectBroker(settings.broker!);
  const results: string[] = [];
  /** Every server started, stopped however the run ends (a failed run left its APIs serving). */
  const children: ChildProcess[] = [];
  try {
    await mongo.db(SERVICE_DB).dropDatabase();
    const collection = mongo.db(DB).collection(COL);
    await collection.drop().catch(() => undefined);
    await collection.insertMany(
      Array.from({ length: RECORDS }, (_, i) => ({
        n: i,
        site: `site-${i % 50}`,
        value: Math.sin(i),
        note: `record ${i}`.padEnd(200, '.'),
      })),
    );
    const ids = (
      await collection
        .find({}, { projection: { _id: 1 } })
        .limit(1000)
        .toArray()
    ).map((d) => String(d._id));
    const ctx = await createServiceContext(settings, createLogger('warn'));
    await ctx.auth.users.ensureSuperuser({ username: 'bench', email: 'bench@example.org', password: 'bench-password-1' });
    const token = await ctx.auth.users.tokenFor('bench');
    await ctx.close();
    const channel = await broker.createConfirmChannel();
    await declareTaskQueue(channel, QUEUE, false);
    await channel.purgeQueue(QUEUE);

    const tsx = resolve('node_modules/tsx/dist/cli.mjs');
    const headers = { authorization: `Token ${token}`, accept: 'application/json' };
    const postHeaders = { ...headers, 'content-type': 'application/json' };
    const body = JSON.stringify({ function: 'tasks.noop', queue: QUEUE, args: [], kwargs: {}, tags: ['bench'] });
    const worker = await startChild(
      [process.execPath, tsx, 'src/cli.ts', 'worker'],
      {
        ...env,
        WORKER_TASK_MODULES: resolve('worker-image/tasks/index.ts'),
        WORKER_QUEUES: QUEUE,
        WORKER_NODE_NAME: 'bench-processes@localhost',
        RESULT_DATABASE: SERVICE_DB,
        LOG_LEVEL: 'info',
      },
      /worker ready/,
    );
    children.push(worker.child);
    /** Both APIs run side by side (the idle one costs nearly nothing) so the runs can alternate. */
    const apis = new Map<number, { base: string; pid: number; stop: () => Promise<void> }>();
    const installed = await installedApi();
    for (const processes of [1, SCALED]) {
      const port = await freePort();
      const api = await startChild(
        installed.command,
        { ...env, ...installed.env, HTTP_PORT: String(port), HTTP_HOST: '127.0.0.1', LOG_LEVEL: 'info', API_PROCESSES: String(processes) },
        /API server listening/,
      );
      children.push(api.child);
      apis.set(processes, { base: `http://127.0.0.1:${port}`, pid: api.child.pid as number, stop: () => stop(api.child) });
    }
    const getById =
      (base: string) =>
      (i: number): RequestSpec => ({
        method: 'GET',
        url: `${base}/api/data_store/data/${DB}/${COL}/${ids[(i * 31) % ids.length]}/`,
        headers,
      });
    const submit = (base: string) => (): RequestSpec => ({
      method: 'POST',
      url: `${base}/api/queue/run/tasks.noop/`,
      headers: postHeaders,
      body,
    });
    for (const { base } of apis.values()) {
      await waitFor(
        async () => {
          const r = await fetch(`${base}/api/queue/?refresh=true`, { headers }).catch(() => undefined);
          const j = (await r?.json().catch(() => undefined)) as { queues?: string[] } | undefined;
          return j?.queues?.includes(QUEUE) === true;
        },
        60_000,
        'the API to see the worker',
      );
      // Warm-up: every process serves requests of both kinds and learns the task list. A process
      // whose first broadcast the worker answered too late (busy with the other API's warm-up)
      // refuses submissions until it asks again, so the submissions are repeated until none is.
      await runLoad(400, 16, getById(base), 200, 20_000);
      for (let attempt = 1; (await runLoad(400, 32, submit(base), 202, 20_000)).errors > 0; attempt++) {
        if (attempt === 10) throw new Error(`${base}: submissions still refused after ${attempt} warm-up runs`);
      }
    }
    await stop(worker.child);
    for (const { base } of apis.values()) {
      for (const spec of [getById(base)(0), submit(base)()]) {
        const probe = await fetch(spec.url, { method: spec.method, headers: spec.headers, body: spec.body });
        if (probe.status !== (spec.method === 'GET' ? 200 : 202))
          throw new Error(`${spec.method} ${spec.url} answered ${probe.status}: ${await probe.text()}`);
      }
    }

    /**
     * Half the budget each, in the order 1, N, N, 1: a machine whose load drifts during the run
     * (a shared one) weighs on both sides alike.
     */
    const compare = async (
      name: string,
      concurrency: number,
      okStatus: number,
      make: (base: string) => (i: number) => RequestSpec,
    ): Promise<void> => {
      const runs = new Map<number, LoadResult[]>([
        [1, []],
        [SCALED, []],
      ]);
      const shares = new Map<number, string>();
      for (const processes of [1, SCALED, SCALED, 1]) {
        const api = apis.get(processes)!;
        const before = cpuSnapshot();
        const r = await runLoad(Math.ceil(REQUESTS / 2), concurrency, make(api.base), okStatus, BUDGET_MS / 2);
        shares.set(processes, cpuShares(before, cpuSnapshot(), { api: [api.pid] }));
        runs.get(processes)!.push(r);
        process.stdout.write(`${line(`${name}, ${processes} process(es)`, r)}\n    ${shares.get(processes)}\n`);
        await channel.purgeQueue(QUEUE);
      }
      const merged = (rs: LoadResult[]): LoadResult => {
        const requests = rs.reduce((n, r) => n + r.requests, 0);
        const seconds = rs.reduce((n, r) => n + r.seconds, 0);
        const worst = (pick: (r: LoadResult) => number) => Math.max(...rs.map(pick));
        return {
          ...rs[0]!,
          requests,
          seconds,
          rps: requests / seconds,
          errors: rs.reduce((n, r) => n + r.errors, 0),
          p50ms: worst((r) => r.p50ms),
          p95ms: worst((r) => r.p95ms),
          p99ms: worst((r) => r.p99ms),
        };
      };
      const one = merged(runs.get(1)!);
      const many = merged(runs.get(SCALED)!);
      results.push(line(`${name}, 1 process`, one), `    ${shares.get(1)} (last run)`);
      results.push(line(`${name}, ${SCALED} processes`, many), `    ${shares.get(SCALED)} (last run)`);
      results.push(`    scaling ratio ${(many.rps / one.rps).toFixed(2)}`);
    };
    // The API alone: an anonymous request answered without the database or the broker, so the
    // API processes are what limits the rate (the other phases share the cores with the engine).
    const apiRoot = (base: string) => (): RequestSpec => ({ method: 'GET', url: `${base}/api/`, headers: { accept: 'application/json' } });
    await compare('(r) GET /api/ (no database)', 32, 200, apiRoot);
    await compare('(d) GET one record by _id', 16, 200, getById);
    await compare('(s) task submissions', 32, 202, submit);
    for (const api of apis.values()) await api.stop();
    await channel.close();
    process.stdout.write(
      `\nAPI processes benchmark: ${services.mongo.kind} and RabbitMQ over TLS, ${RECORDS} records, ${availableParallelism()} cores, load average ${loadavg()[0]?.toFixed(1)} at the end, cluster scheduling ${process.env.NODE_CLUSTER_SCHED_POLICY ?? 'none (the default of serve)'}\n`,
    );
    for (const l of results) process.stdout.write(`${l}\n`);
  } finally {
    for (const child of children) await stop(child).catch(() => undefined);
    await broker.close().catch(() => undefined);
    await mongo.close();
    await services.stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
