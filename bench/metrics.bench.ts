/**
 * What the metrics cost. Prints numbers and ratios; asserts nothing.
 * Rounds of fresh API processes with METRICS_ENABLED=true and =false on the same services and
 * data, measuring in each:
 *   (d) GET one record by its _id (/<db>/<col>/<id>/), concurrency 16, with both APIs up and
 *       the load alternating between them in slices (on, off, off, on, ...)
 *   (s) POST /api/queue/run/tasks.noop/ (202 after the publisher confirm), concurrency 32,
 *       drained by one TypeScript worker; one API at a time while the one with metrics is up
 *       (it listens to the worker's events), odd rounds on first, even rounds off first
 * With metrics on, a scraper reads /api/metrics every second while that API is measured, as a
 * Prometheus with a short interval would. The worker sends task events in both modes (once an
 * API with metrics asked for them, a worker keeps sending them); what they cost the worker is
 * measured apart, first, with and without them.
 * The summary is the ratio on ÷ off of the median rates, the median of each round's ratio
 * (goal: at least 0.95), and the API process's CPU time per request (from /proc), which other
 * load on the machine disturbs less than the rates do.
 * With --same-both, both APIs run without metrics (the "on" one included): the ratios then
 * show how far apart two identical setups come out on this machine, the method's noise.
 * Usage: npm run bench:metrics [-- --seconds 10 --rounds 3 --same-both]
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { spawn, type ChildProcess } from 'node:child_process';
import { startLocalServices } from '../src/local-services/services.js';
import { connectMongo } from '../src/db/mongo-client.js';
import { connectBroker } from '../src/queue/connection/broker-connection.js';
import { declareTaskQueue } from '../src/queue/protocol/entities.js';
import { loadSettings } from '../src/config/settings.js';
import { createLogger } from '../src/log/logger.js';
import { createServiceContext } from '../src/app/service-context.js';
import { freePort } from '../src/local-services/ports.js';
import { runLoad, type LoadResult } from './load.js';
import { readFileSync } from 'node:fs';
import { startChild, stop, benchServiceEnv, installedApi } from './processes.js';
import { ResultsRecorder } from './results.js';

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '3' },
    records: { type: 'string', default: '10000' },
    // Calibration: both APIs without metrics, so the ratios show the method's own noise.
    'same-both': { type: 'boolean', default: false },
  },
});
const BUDGET_MS = Number(args.seconds) * 1000;
const ROUNDS = Number(args.rounds);
const RECORDS = Number(args.records);
const SAME_BOTH = args['same-both'] === true;
const DB = 'bench_metrics';
const COL = 'records';
const QUEUE = 'bench-metrics';
const SERVICE_DB = 'bench_metrics_service';
const WORKER_NODE = 'bench-metrics@localhost';
/** Slices of the GET phase per mode. */
const GET_SLICES = 5;

type Mode = 'on' | 'off';
type Measured = Pick<LoadResult, 'requests' | 'errors' | 'rps' | 'p50ms' | 'p99ms'> & { cpuUs: number };

interface Api {
  mode: Mode;
  base: string;
  child: ChildProcess;
  pid: number;
  /** Whether its scraper (metrics on only) reads /api/metrics now. */
  scraping: boolean;
  stopped: boolean;
  scraper: Promise<void>;
}

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
 * 10 ms). Descendants, so that a server that runs its work in child processes is counted whole.
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
async function measured(pid: number, load: () => Promise<LoadResult>): Promise<Measured> {
  const before = cpuSeconds(pid);
  const result = await load();
  return { ...result, cpuUs: ((cpuSeconds(pid) - before) * 1e6) / Math.max(1, result.requests) };
}

function line(name: string, r: Measured): string {
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
    // Kept open for remote control of the worker (its task events), without metrics of its own.
    const ctx = await createServiceContext({ ...settings, metrics: { ...settings.metrics, enabled: false } }, createLogger('warn'));
    await ctx.auth.users.ensureSuperuser({ username: 'bench', email: 'bench@example.org', password: 'bench-password-1' });
    const token = await ctx.auth.users.tokenFor('bench');
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
        WORKER_NODE_NAME: WORKER_NODE,
        WORKER_CONCURRENCY: '4',
        RESULT_DATABASE: SERVICE_DB,
      },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    children.push(worker);
    const workerPid = worker.pid as number;
    const taskEvents = async (enabled: boolean): Promise<void> => {
      await ctx.queue!.control.cast(enabled ? 'enable_events' : 'disable_events', {}, { destination: [WORKER_NODE] });
      await new Promise((r) => setTimeout(r, 300));
    };

    const headers = { authorization: `Token ${token}`, accept: 'application/json' };
    const postHeaders = { ...headers, 'content-type': 'application/json' };
    const body = JSON.stringify({ function: 'tasks.noop', queue: QUEUE, args: [], kwargs: {} });
    const drained = () =>
      waitFor(async () => (await channel.checkQueue(QUEUE)).messageCount === 0, 120_000, 'the worker to drain the queue');

    const installed = await installedApi();
    const startApi = async (mode: Mode): Promise<Api> => {
      const port = await freePort();
      const { child } = await startChild(
        installed.command,
        {
          ...env,
          ...installed.env,
          HTTP_PORT: String(port),
          HTTP_HOST: '127.0.0.1',
          LOG_LEVEL: 'info',
          METRICS_ENABLED: mode === 'on' && !SAME_BOTH ? 'true' : 'false',
        },
        /API server listening/,
      );
      const api: Api = {
        mode,
        base: `http://127.0.0.1:${port}`,
        child,
        pid: child.pid as number,
        scraping: false,
        stopped: false,
        scraper: Promise.resolve(),
      };
      if (mode === 'on' && !SAME_BOTH)
        api.scraper = (async () => {
          while (!api.stopped) {
            if (api.scraping)
              await fetch(`${api.base}/api/metrics`)
                .then((r) => r.arrayBuffer())
                .catch(() => undefined);
            await new Promise((r) => setTimeout(r, 1_000));
          }
        })();
      await waitFor(
        async () =>
          ((await (await fetch(`${api.base}/api/queue/?refresh=true`, { headers })).json()) as { queues?: string[] }).queues?.includes(
            QUEUE,
          ) === true,
        60_000,
        'API and worker',
      );
      await runLoad(Number.MAX_SAFE_INTEGER, 16, getRecord(api), 200, 2_000);
      await runLoad(200, 32, submitRun(api), 202);
      await drained();
      return api;
    };
    const stopApi = async (api: Api): Promise<void> => {
      api.stopped = true;
      await api.scraper;
      await stop(api.child);
    };
    const getRecord = (api: Api) => (i: number) => ({
      method: 'GET',
      url: `${api.base}/api/data_store/data/${DB}/${COL}/${ids[i % ids.length]}/`,
      headers,
    });
    const submitRun = (api: Api) => () => ({ method: 'POST', url: `${api.base}/api/queue/run/tasks.noop/`, headers: postHeaders, body });
    /** A submission run, with the worker's CPU per task until it has drained the queue. */
    const submissions = async (api: Api): Promise<Measured & { workerUs: number }> => {
      api.scraping = api.mode === 'on';
      const workerBefore = cpuSeconds(workerPid);
      const result = await measured(api.pid, () => runLoad(Number.MAX_SAFE_INTEGER, 32, submitRun(api), 202, BUDGET_MS));
      await drained();
      api.scraping = false;
      return { ...result, workerUs: ((cpuSeconds(workerPid) - workerBefore) * 1e6) / Math.max(1, result.requests) };
    };
    /**
     * GETs with both APIs up, in slices that alternate between them (on, off, off, on, ...), so
     * a machine whose speed drifts weighs on both alike. Both are idle while the other is
     * measured: no task runs, and the on one is scraped only during its own slices.
     */
    const interleavedGets = async (apis: Record<Mode, Api>): Promise<Record<Mode, Measured>> => {
      const totals: Record<Mode, { requests: number; seconds: number; cpu: number; errors: number; p50: number[]; p99: number[] }> = {
        on: { requests: 0, seconds: 0, cpu: 0, errors: 0, p50: [], p99: [] },
        off: { requests: 0, seconds: 0, cpu: 0, errors: 0, p50: [], p99: [] },
      };
      for (let slice = 0; slice < 2 * GET_SLICES; slice++) {
        const mode: Mode = slice % 4 === 0 || slice % 4 === 3 ? 'on' : 'off';
        const api = apis[mode];
        api.scraping = mode === 'on';
        const before = cpuSeconds(api.pid);
        const r = await runLoad(Number.MAX_SAFE_INTEGER, 16, getRecord(api), 200, BUDGET_MS / GET_SLICES);
        const t = totals[mode];
        t.cpu += cpuSeconds(api.pid) - before;
        t.requests += r.requests;
        t.seconds += r.seconds;
        t.errors += r.errors;
        t.p50.push(r.p50ms);
        t.p99.push(r.p99ms);
        api.scraping = false;
      }
      const result = (t: (typeof totals)[Mode]): Measured => ({
        requests: t.requests,
        errors: t.errors,
        rps: t.requests / t.seconds,
        p50ms: median(t.p50),
        p99ms: median(t.p99),
        cpuUs: (t.cpu * 1e6) / Math.max(1, t.requests),
      });
      return { on: result(totals.on), off: result(totals.off) };
    };

    // What the workers' task events cost a worker, apart from the metrics: the service asks
    // for them with metrics on, as Flower does, and so does the Operations page.
    process.stdout.write('worker task events (metrics off):\n');
    const eventCost: Record<'without' | 'with', number[]> = { without: [], with: [] };
    {
      const api = await startApi('off');
      try {
        // Without, with, with, without: a worker still warming up weighs on both alike.
        for (const events of ['without', 'with', 'with', 'without'] as const) {
          await taskEvents(events === 'with');
          const run = await submissions(api);
          eventCost[events].push(run.workerUs);
          process.stdout.write(`  ${line(`(s) ${events} task events`, run)}  worker CPU ${run.workerUs.toFixed(0)} µs/task\n`);
        }
      } finally {
        await stopApi(api);
      }
    }

    const rounds: Array<Record<Mode, { get: Measured; submit: Measured & { workerUs: number } }>> = [];
    for (let round = 1; round <= ROUNDS; round++) {
      // The worker sends task events in both modes: it keeps them on once an API with metrics
      // asked, and so it would in a running system; the difference measured is the API's.
      await taskEvents(true);
      const apis = {} as Record<Mode, Api>;
      const submit = {} as Record<Mode, Measured & { workerUs: number }>;
      let get: Record<Mode, Measured>;
      try {
        // The off API never listens to events, so it may be up while the on one works; not
        // the other way round. Odd rounds submit with metrics on first, even rounds off first.
        if (round % 2 === 1) {
          apis.on = await startApi('on');
          apis.off = await startApi('off');
          get = await interleavedGets(apis);
          submit.on = await submissions(apis.on);
          await stopApi(apis.on);
          submit.off = await submissions(apis.off);
        } else {
          apis.off = await startApi('off');
          submit.off = await submissions(apis.off);
          apis.on = await startApi('on');
          get = await interleavedGets(apis);
          submit.on = await submissions(apis.on);
        }
      } finally {
        for (const api of Object.values(apis)) if (!api.stopped) await stopApi(api);
      }
      rounds.push({ on: { get: get.on, submit: submit.on }, off: { get: get.off, submit: submit.off } });
      for (const mode of ['on', 'off'] as const)
        process.stdout.write(
          `round ${round}, metrics ${mode}:\n  ${line('(d) GET by _id', get[mode])}\n  ${line('(s) task submissions', submit[mode])}  worker CPU ${submit[mode].workerUs.toFixed(0)} µs/task\n`,
        );
    }

    const of = (mode: Mode, pick: (r: (typeof rounds)[number][Mode]) => number) => median(rounds.map((r) => pick(r[mode])));
    const paired = (pick: (r: (typeof rounds)[number][Mode]) => number) => median(rounds.map((r) => pick(r.on) / pick(r.off)));
    const summary = (name: string, phase: 'get' | 'submit') =>
      `  ${name.padEnd(20)} on ${of('on', (r) => r[phase].rps).toFixed(0)} req/s  off ${of('off', (r) => r[phase].rps).toFixed(0)} req/s  ` +
      `ratio ${(of('on', (r) => r[phase].rps) / of('off', (r) => r[phase].rps)).toFixed(3)}  per round ${paired((r) => r[phase].rps).toFixed(3)} | ` +
      `API CPU on ${of('on', (r) => r[phase].cpuUs).toFixed(0)} µs/req  off ${of('off', (r) => r[phase].cpuUs).toFixed(0)} µs/req  per round ${paired((r) => r[phase].cpuUs).toFixed(3)}\n`;
    process.stdout.write(
      `\n${SAME_BOTH ? 'Calibration, metrics off in both (--same-both)' : 'Metrics cost'} (medians of ${ROUNDS} rounds, ${BUDGET_MS / 1000} s per phase and mode; "per round": median of each round's on ÷ off):\n` +
        summary('(d) GET by _id', 'get') +
        summary('(s) task submissions', 'submit') +
        `  worker CPU per task  on ${of('on', (r) => r.submit.workerUs).toFixed(0)} µs  off ${of('off', (r) => r.submit.workerUs).toFixed(0)} µs (task events on in both)\n` +
        `  worker task events   without ${median(eventCost.without).toFixed(0)} µs/task  with ${median(eventCost.with).toFixed(0)} µs/task (metrics off)\n`,
    );
    if (!SAME_BOTH) {
      const recorder = new ResultsRecorder('metrics', 'npm run bench:metrics');
      for (const [what, phase, goal] of [
        ['GET one record by _id with metrics on', 'get', '≥ 0.95'],
        ['task submissions with metrics on', 'submit', '≥ 0.95'],
      ] as const) {
        recorder.add({
          what: `${what}, medians of ${ROUNDS} rounds`,
          ours: of('on', (r) => r[phase].rps),
          unit: 'req/s',
          baseline: 'the same with metrics off',
          baselineValue: of('off', (r) => r[phase].rps),
          goal,
        });
      }
      recorder.save();
    }
    await ctx.close();
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
