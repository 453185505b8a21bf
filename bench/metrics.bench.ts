/**
 * What the metrics cost. Prints numbers and ratios; asserts nothing.
 * Rounds of fresh API processes with METRICS_ENABLED=true and =false, alternating, on the same
 * services and data; in each:
 *   (d) GET one record by its _id (/<db>/<col>/<id>/), concurrency 16
 *   (s) POST /api/queue/run/tasks.noop/ (202 after the publisher confirm), concurrency 32,
 *       drained by one TypeScript worker
 * With metrics on, a scraper reads /api/metrics every second meanwhile, as Prometheus would.
 * The summary is the ratio on/off of the median rate per phase (goal: at least 0.95), and the
 * API process's CPU time per request (from /proc), which other load on the machine disturbs less
 * than the rates do.
 * Usage: npm run bench:metrics [-- --seconds 10 --rounds 3]
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { spawn, type ChildProcess } from 'node:child_process';
import { startLocalServices } from '../src/runtime/local/services.js';
import { connectMongo } from '../src/db/mongo-client.js';
import { connectBroker } from '../src/queue/broker-connection.js';
import { declareTaskQueue } from '../src/queue/protocol/entities.js';
import { loadSettings } from '../src/config/settings.js';
import { createLogger } from '../src/log/logger.js';
import { createServiceContext } from '../src/service.js';
import { freePort } from '../src/runtime/local/ports.js';
import { runLoad, type LoadResult } from './load.js';
import { readFileSync } from 'node:fs';
import { startChild, stop, benchServiceEnv } from './processes.js';

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '3' },
    records: { type: 'string', default: '10000' },
  },
});
const BUDGET_MS = Number(args.seconds) * 1000;
const ROUNDS = Number(args.rounds);
const RECORDS = Number(args.records);
const DB = 'bench_metrics';
const COL = 'records';
const QUEUE = 'bench-metrics';
const SERVICE_DB = 'bench_metrics_service';

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
};

async function waitFor(probe: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * User + system CPU seconds a process and its descendants have used (Linux: /proc, clock ticks of
 * 10 ms). Descendants, because tsx's command line runs the server in a child process.
 */
function cpuSeconds(pid: number): number {
  let total = 0;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    total += (Number(fields[11]) + Number(fields[12])) / 100;
    for (const child of readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean))
      total += cpuSeconds(Number(child));
  } catch {
    // Gone meanwhile.
  }
  return total;
}

/** Runs a load and adds the API's CPU microseconds per request. */
async function measured(pid: number, load: () => Promise<LoadResult>): Promise<LoadResult & { cpuUs: number }> {
  const before = cpuSeconds(pid);
  const result = await load();
  return { ...result, cpuUs: ((cpuSeconds(pid) - before) * 1e6) / Math.max(1, result.requests) };
}

function line(name: string, r: LoadResult & { cpuUs: number }): string {
  return `${name.padEnd(28)} ${r.rps.toFixed(0).padStart(6)} req/s  p50 ${r.p50ms.toFixed(1).padStart(6)} ms  p99 ${r.p99ms.toFixed(1).padStart(6)} ms  API CPU ${r.cpuUs.toFixed(0).padStart(5)} µs/req  n ${r.requests}  errors ${r.errors}`;
}

async function main(): Promise<void> {
  process.stdout.write('Starting services (state in .state/bench)...\n');
  const services = await startLocalServices({ stateDir: '.state/bench', reuseCertificates: true });
  const env = benchServiceEnv(services.env(), SERVICE_DB, { TASK_LIST_CACHE_S: '60', METRICS_ALLOWED_IPS: '127.0.0.1' });
  const settings = loadSettings(env);
  const mongo = await connectMongo(settings.mongo);
  const broker = await connectBroker(settings.broker!);
  const children: ChildProcess[] = [];
  try {
    await mongo.db(DB).dropDatabase();
    await mongo.db(SERVICE_DB).dropDatabase();
    const collection = mongo.db(DB).collection(COL);
    for (let i = 0; i < RECORDS; i += 5000) {
      await collection.insertMany(
        Array.from({ length: Math.min(5000, RECORDS - i) }, (_, k) => ({ n: i + k, note: `record-${i + k}`.padEnd(200, 'x') })),
      );
    }
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
    const channel = await broker.createChannel();
    await declareTaskQueue(channel, QUEUE, false);
    await channel.purgeQueue(QUEUE);

    const tsx = resolve('node_modules/tsx/dist/cli.mjs');
    // Its readiness shows in the task list below; it logs warnings only, to this process's stderr.
    const worker = spawn(process.execPath, [tsx, 'src/cli.ts', 'worker'], {
      env: {
        ...process.env,
        ...env,
        WORKER_TASK_MODULES: resolve('worker-image/tasks/index.ts'),
        WORKER_QUEUES: QUEUE,
        WORKER_NODE_NAME: 'bench-metrics@localhost',
        WORKER_CONCURRENCY: '4',
        RESULT_DATABASE: SERVICE_DB,
      },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    children.push(worker);

    const headers = { authorization: `Token ${token}`, accept: 'application/json' };
    const postHeaders = { ...headers, 'content-type': 'application/json' };
    const body = JSON.stringify({ function: 'tasks.noop', queue: QUEUE, args: [], kwargs: {} });
    const drained = () =>
      waitFor(async () => (await channel.checkQueue(QUEUE)).messageCount === 0, 120_000, 'the worker to drain the queue');
    const rates: Record<'on' | 'off', { get: number[]; submit: number[]; getCpu: number[]; submitCpu: number[]; workerCpu: number[] }> = {
      on: { get: [], submit: [], getCpu: [], submitCpu: [], workerCpu: [] },
      off: { get: [], submit: [], getCpu: [], submitCpu: [], workerCpu: [] },
    };

    for (let round = 1; round <= ROUNDS; round++) {
      for (const mode of round % 2 === 1 ? (['on', 'off'] as const) : (['off', 'on'] as const)) {
        const port = await freePort();
        const api = await startChild(
          [process.execPath, tsx, 'src/cli.ts', 'serve'],
          { ...env, HTTP_PORT: String(port), HTTP_HOST: '127.0.0.1', LOG_LEVEL: 'info', METRICS_ENABLED: mode === 'on' ? 'true' : 'false' },
          /API server listening/,
        );
        const base = `http://127.0.0.1:${port}`;
        let scraping = mode === 'on';
        const scraper = (async () => {
          while (scraping) {
            await fetch(`${base}/api/metrics`)
              .then((r) => r.arrayBuffer())
              .catch(() => undefined);
            await new Promise((r) => setTimeout(r, 1_000));
          }
        })();
        try {
          await waitFor(
            async () =>
              ((await (await fetch(`${base}/api/queue/?refresh=true`, { headers })).json()) as { queues?: string[] }).queues?.includes(
                QUEUE,
              ) === true,
            60_000,
            'API and worker',
          );
          const getRecord = (i: number) => ({
            method: 'GET',
            url: `${base}/api/data_store/data/${DB}/${COL}/${ids[i % ids.length]}/`,
            headers,
          });
          await runLoad(Number.MAX_SAFE_INTEGER, 16, getRecord, 200, Math.min(BUDGET_MS, 3_000));
          const pid = api.child.pid as number;
          const get = await measured(pid, () => runLoad(Number.MAX_SAFE_INTEGER, 16, getRecord, 200, BUDGET_MS));
          const submitRun = () => ({ method: 'POST', url: `${base}/api/queue/run/tasks.noop/`, headers: postHeaders, body });
          await runLoad(200, 32, submitRun, 202);
          await drained();
          const workerBefore = cpuSeconds(worker.pid as number);
          const submit = await measured(pid, () => runLoad(Number.MAX_SAFE_INTEGER, 32, submitRun, 202, BUDGET_MS));
          await drained();
          const workerUs = ((cpuSeconds(worker.pid as number) - workerBefore) * 1e6) / Math.max(1, submit.requests);
          rates[mode].get.push(get.rps);
          rates[mode].submit.push(submit.rps);
          rates[mode].getCpu.push(get.cpuUs);
          rates[mode].submitCpu.push(submit.cpuUs);
          rates[mode].workerCpu.push(workerUs);
          process.stdout.write(
            `round ${round}, metrics ${mode}:\n  ${line('(d) GET by _id', get)}\n  ${line('(s) task submissions', submit)}  worker CPU ${workerUs.toFixed(0)} µs/task\n`,
          );
        } finally {
          scraping = false;
          await scraper;
          await stop(api.child);
        }
      }
    }
    const ratio = (phase: 'get' | 'submit' | 'getCpu' | 'submitCpu' | 'workerCpu') => median(rates.on[phase]) / median(rates.off[phase]);
    const cpu = (phase: 'getCpu' | 'submitCpu') =>
      `API CPU on ${median(rates.on[phase]).toFixed(0)} µs/req  off ${median(rates.off[phase]).toFixed(0)} µs/req  ratio ${ratio(phase).toFixed(3)}`;
    process.stdout.write(
      `\nMetrics cost (median of ${ROUNDS} rounds, ${BUDGET_MS / 1000} s each):\n` +
        `  (d) GET by _id        on ${median(rates.on.get).toFixed(0)} req/s  off ${median(rates.off.get).toFixed(0)} req/s  ratio ${ratio('get').toFixed(3)} | ${cpu('getCpu')}\n` +
        `  (s) task submissions  on ${median(rates.on.submit).toFixed(0)} req/s  off ${median(rates.off.submit).toFixed(0)} req/s  ratio ${ratio('submit').toFixed(3)} | ${cpu('submitCpu')}\n` +
        `  worker CPU per task   on ${median(rates.on.workerCpu).toFixed(0)} µs  off ${median(rates.off.workerCpu).toFixed(0)} µs  ratio ${ratio('workerCpu').toFixed(3)}\n`,
    );
  } finally {
    for (const child of children) await stop(child);
    await broker.close().catch(() => undefined);
    await mongo.close();
    await services.stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
