/**
 * Task-queue benchmark (issue: task queue, "Benchmark"). Prints numbers and ratios; asserts nothing.
 * Same broker and database, same machine, one run:
 *   1. submissions/s through POST /api/queue/run/ at concurrency 32 (202 after the publisher
 *      confirm), beside a plain node:http server doing the same publish + task-log insert without
 *      the API's layers (bench/queue-baseline-server.ts), and a plain amqplib publisher with
 *      confirms (the ceiling: no HTTP, no database), once onto a queue nobody consumes and once
 *      onto the benchmark queue while the worker drains it, as during the API's run; with the
 *      CPU milliseconds per request of the server, the worker and the load generator;
 *   2. end-to-end latency p50/p99 of a no-op task with ?wait= through the API, and the round trip
 *      of a chain of 3 tasks on the TypeScript worker;
 *   3. no-op tasks/s executed by one TypeScript worker process beside one Python Celery worker
 *      process (prefork, concurrency 1 and 2), from a pre-filled queue, measured between the first
 *      and the last result's date_done; then `cybercom worker` beside a Celery worker configured by
 *      hand (with Celery's defaults, and with the service's conventions), all on the client's venv,
 *      in alternating rounds.
 * The API and the TypeScript workers (the one that drains the benchmark queue and the measured ones) run as an installation runs them: the
 * compiled build, NODE_ENV=production, the API with its installed Node flags; one API process
 * unless `--processes N` (`--processes default`: the count an installation chooses here).
 * Usage: npm run bench:queue [-- --submissions 3000 --tasks 2000] [-- --only submissions|workers] [-- --generator undici]
 *        [-- --processes N|default] [-- --api-flags=<node flags>] [-- --runner dist|tsx]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { startLocalServices } from '../src/local-services/services.js';
import { loadSettings } from '../src/config/settings.js';
import { connectMongo } from '../src/db/mongo-client.js';
import { connectBroker } from '../src/queue/connection/broker-connection.js';
import { createLogger } from '../src/log/logger.js';
import { createServiceContext } from '../src/app/service-context.js';
import { freePort } from '../src/local-services/ports.js';
import { buildTaskMessage, encodeTaskBody, taskPublishOptions } from '../src/queue/protocol/task-message.js';
import { declareTaskQueue } from '../src/queue/protocol/entities.js';
import { ensureServiceBuild } from '../src/installation/runner/service-build.js';
import { benchServiceEnv, installedApiProcess } from './processes.js';
import { defaultApiProcesses } from '../src/config/api-processes.js';
import { runLoad, runPooledLoad } from './load.js';
import { cpuMsPer, cpuSnapshot, serviceMsPer } from './cpu-share.js';
import { ResultsRecorder } from './results.js';

const { values: args } = parseArgs({
  options: {
    submissions: { type: 'string', default: '3000' },
    tasks: { type: 'string', default: '2000' },
    latency: { type: 'string', default: '300' },
    /** `submissions`: only part 1 (the API beside its baselines), for profiling a submission; `workers`: only part 3. */
    only: { type: 'string' },
    /**
     * Part 1's HTTP client: `http` (default, node:http's client) or `undici` (a connection pool), to
     * check that the load generator is not what limits the rate (both measured at about 1 ms of CPU
     * per request here, a third of the API's).
     */
    generator: { type: 'string', default: 'http' },
    /** API processes behind the port (API_PROCESSES); `default`: what an installation on this machine chooses. */
    processes: { type: 'string', default: '1' },
    /**
     * Node flags for the API processes after the installed ones (the last of a repeated V8 flag
     * wins), e.g. `--api-flags=--max-semi-space-size=16` to weigh a memory setting's CPU cost.
     */
    'api-flags': { type: 'string', default: '' },
    /** `tsx`: the API and its worker run from the sources through tsx, without NODE_ENV=production (as before), for a before/after comparison. */
    runner: { type: 'string', default: 'dist' },
  },
});
const SUBMISSIONS = Number(args.submissions);
const TASKS = Number(args.tasks);
const LATENCY_RUNS = Number(args.latency);
const CHAIN_RUNS = 105;
const SERVICE_DB = 'bench_queue';
const QUEUE = 'bench';
/** BENCH_CPU_PROFILE_DIR=<dir>: the API and the measured TypeScript workers write V8 CPU profiles there. */
const PROFILE_DIR = process.env.BENCH_CPU_PROFILE_DIR;

/** `celery worker` arguments for the interop tests' app: prefork, one queue, no gossip or mingle, warnings only. */
function interopWorkerArgs(concurrency: number, queue: string, node: string): string[] {
  return [
    '-A',
    'interop_app',
    'worker',
    '-P',
    'prefork',
    '-c',
    String(concurrency),
    '-Q',
    queue,
    '-n',
    node,
    '--without-gossip',
    '--without-mingle',
    '-l',
    'WARNING',
  ];
}

/** Children log warnings only; their output goes to this process's stderr so a full pipe never blocks them. */
function spawnLogged(command: string, argv: string[], env: NodeJS.ProcessEnv, cwd?: string): ChildProcess {
  return spawn(command, argv, { env, cwd, stdio: ['ignore', 'inherit', 'inherit'] });
}

/** Starts a child whose stdout announces readiness with a LISTENING line. */
async function startListening(command: string, argv: string[], env: NodeJS.ProcessEnv): Promise<ChildProcess> {
  const child = spawn(command, argv, { env, stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((ready, fail) => {
    let seen = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      seen += chunk.toString('utf8');
      if (seen.includes('LISTENING')) ready();
    });
    child.once('exit', (code) => fail(new Error(`${argv.join(' ')} exited ${String(code)} before listening`)));
  });
  child.stdout?.resume();
  return child;
}

async function waitFor(probe: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function stop(child: ChildProcess | undefined): Promise<void> {
  if (child === undefined || child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

function parseDateDone(v: unknown): number {
  if (v instanceof Date) return v.getTime();
  return Date.parse(`${String(v)}Z`);
}

async function main(): Promise<void> {
  process.stdout.write('Starting services (state in .state/bench)...\n');
  const services = await startLocalServices({ stateDir: '.state/bench', reuseCertificates: true });
  // The API and the worker of parts 1 and 2 run as an installation runs them: the compiled build
  // in production mode (no loader, no development-only work).
  const fromSources = args.runner === 'tsx';
  const env = benchServiceEnv(services.env(), SERVICE_DB, { TASK_LIST_CACHE_S: '60', ...(fromSources ? {} : { NODE_ENV: 'production' }) });
  if (args.processes === 'default') delete env.API_PROCESSES;
  else env.API_PROCESSES = String(args.processes);
  const settings = loadSettings(env);
  const mongo = await connectMongo(settings.mongo);
  const broker = await connectBroker(settings.broker!);
  const children: ChildProcess[] = [];
  const lines: string[] = [];
  const recorder = new ResultsRecorder('queue', 'npm run bench:queue');
  /** Printed at once (progress) and again in the summary. */
  const report = (line: string): void => {
    lines.push(line);
    process.stdout.write(`${line}\n`);
  };
  try {
    await mongo.db(SERVICE_DB).dropDatabase();
    const ctx = await createServiceContext(settings, createLogger('warn'));
    await ctx.auth.users.ensureSuperuser({ username: 'bench', email: 'bench@example.org', password: 'bench-password-1' });
    const token = await ctx.auth.users.tokenFor('bench');
    await ctx.close();
    const channel = await broker.createConfirmChannel();
    for (const q of [QUEUE, 'bench-ceiling', 'bench-ts', 'bench-py1', 'bench-py2', 'bench-hand', 'bench-cw']) {
      await declareTaskQueue(channel, q, false);
      await channel.purgeQueue(q);
    }

    const tsx = resolve('node_modules/tsx/dist/cli.mjs');
    // tsx's CLI runs the script in a child process; profiling needs the loader in this one.
    const profiled = PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`, '--import', 'tsx'] : [tsx];
    const workerEnv = (queue: string, node: string, concurrency = 4, resultCollection = 'tombstone') => ({
      ...process.env,
      ...env,
      WORKER_TASK_MODULES: resolve('worker-image/tasks/index.ts'),
      WORKER_QUEUES: queue,
      WORKER_NODE_NAME: node,
      WORKER_CONCURRENCY: String(concurrency),
      RESULT_DATABASE: SERVICE_DB,
      RESULT_COLLECTION: resultCollection,
      LOG_LEVEL: 'warn',
    });

    if (args.only === 'workers') {
      await workerThroughput();
      return;
    }

    // The API and one TS worker on the benchmark queue, compiled (or, with --runner tsx, from the sources).
    const { entry } = await ensureServiceBuild();
    const profileFlags = PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`] : [];
    const apiFlags = args['api-flags'].split(/\s+/).filter((flag) => flag.length > 0);
    const installed = fromSources
      ? { command: [process.execPath, ...apiFlags, ...profiled, 'src/cli.ts', 'serve'], env: {} }
      : installedApiProcess([...profileFlags, ...apiFlags, entry, 'serve']);
    const apiPort = await freePort();
    const api = spawnLogged(installed.command[0] as string, installed.command.slice(1), {
      ...process.env,
      ...env,
      ...installed.env,
      HTTP_PORT: String(apiPort),
      HTTP_HOST: '127.0.0.1',
    });
    const worker = fromSources
      ? spawnLogged(process.execPath, [tsx, 'src/cli.ts', 'worker'], workerEnv(QUEUE, 'bench-api-worker@localhost'))
      : spawnLogged(process.execPath, [entry, 'worker'], {
          ...workerEnv(QUEUE, 'bench-api-worker@localhost'),
          WORKER_TASK_MODULES: resolve('dist/worker-image/tasks/index.js'),
        });
    children.push(api, worker);
    const base = `http://127.0.0.1:${apiPort}`;
    const headers = { authorization: `Token ${token}`, accept: 'application/json', 'content-type': 'application/json' };
    const body = JSON.stringify({ function: 'tasks.noop', queue: QUEUE, args: [], kwargs: {}, tags: ['bench'] });
    await waitFor(
      async () => {
        try {
          const r = await fetch(`${base}/api/queue/?refresh=true`, { headers });
          const j = (await r.json()) as { queues?: string[] };
          return j.queues?.includes(QUEUE) === true;
        } catch {
          return false;
        }
      },
      60_000,
      'API and worker',
    );

    const submitLoad = args.generator === 'undici' ? runPooledLoad : runLoad;
    // 1. submissions/s: each run starts on an empty queue that the worker keeps draining.
    const drained = () =>
      waitFor(async () => (await channel.checkQueue(QUEUE)).messageCount === 0, 120_000, 'the worker to drain the queue');
    await submitLoad(200, 32, () => ({ method: 'POST', url: `${base}/api/queue/run/tasks.noop/`, headers, body }), 202);
    await drained();
    // CPU per request of each process (pid-based, so other work on the machine does not count):
    // the server under test, the task worker draining the queue, and this process generating the load.
    const roles = (server: ChildProcess) => ({ server: [server.pid ?? -1], worker: [worker.pid ?? -1] });
    /** This process's own CPU (its children, the servers and the worker, are not part of it). */
    const generatorMs = (since: NodeJS.CpuUsage, requests: number) => {
      const used = process.cpuUsage(since);
      return (used.user + used.system) / 1000 / requests;
    };
    const cpuLine = (ms: Record<string, number>) =>
      `CPU ms/request: server ${ms.server?.toFixed(2)}, worker ${ms.worker?.toFixed(2)}, load generator ${ms.generator?.toFixed(2)}` +
      `, database ${(ms.database ?? 0).toFixed(2)}, broker ${(ms.broker ?? 0).toFixed(2)}` +
      ` (all ${Object.values(ms)
        .reduce((a, b) => a + b, 0)
        .toFixed(2)})`;
    let cpuBefore = cpuSnapshot();
    let ownBefore = process.cpuUsage();
    const submitted = await submitLoad(
      SUBMISSIONS,
      32,
      () => ({ method: 'POST', url: `${base}/api/queue/run/tasks.noop/`, headers, body }),
      202,
    );
    let cpuAfter = cpuSnapshot();
    const apiCpu = {
      ...cpuMsPer(cpuBefore, cpuAfter, roles(api), submitted.requests),
      ...serviceMsPer(cpuBefore, cpuAfter, submitted.requests),
      generator: generatorMs(ownBefore, submitted.requests),
    };
    await drained();
    const baselinePort = await freePort();
    const baseline = await startListening(process.execPath, [tsx, 'bench/queue-baseline-server.ts'], {
      ...process.env,
      ...env,
      PORT: String(baselinePort),
      BENCH_DB: SERVICE_DB,
    });
    children.push(baseline);
    const baselineRequest = () => ({
      method: 'POST',
      url: `http://127.0.0.1:${baselinePort}/run/tasks.noop`,
      headers: { 'content-type': 'application/json' },
      body,
    });
    await submitLoad(200, 32, baselineRequest, 202);
    await drained();
    cpuBefore = cpuSnapshot();
    ownBefore = process.cpuUsage();
    const plain = await submitLoad(SUBMISSIONS, 32, baselineRequest, 202);
    cpuAfter = cpuSnapshot();
    const plainCpu = {
      ...cpuMsPer(cpuBefore, cpuAfter, roles(baseline), plain.requests),
      ...serviceMsPer(cpuBefore, cpuAfter, plain.requests),
      generator: generatorMs(ownBefore, plain.requests),
    };
    await stop(baseline);
    await drained();
    const publisherCpu = new Map<string, Record<string, number>>();
    /** Publishes SUBMISSIONS messages with confirms, 32 in flight, as fast as the broker confirms them. */
    const barePublisher = async (queue: string): Promise<number> => {
      const started = process.hrtime.bigint();
      const before = cpuSnapshot();
      const ownStart = process.cpuUsage();
      let inflight: Promise<void>[] = [];
      for (let i = 0; i < SUBMISSIONS; i++) {
        const m = buildTaskMessage({ taskName: 'tasks.noop', authenticatedUser: 'bench' });
        inflight.push(
          new Promise<void>((ok, fail) =>
            channel.publish('', queue, encodeTaskBody(m), taskPublishOptions(m), (e: unknown) => (e ? fail(e) : ok())),
          ),
        );
        if (inflight.length >= 32) {
          await Promise.all(inflight);
          inflight = [];
        }
      }
      await Promise.all(inflight);
      const rate = SUBMISSIONS / (Number(process.hrtime.bigint() - started) / 1e9);
      const after = cpuSnapshot();
      publisherCpu.set(queue, {
        ...cpuMsPer(before, after, { worker: [worker.pid ?? -1] }, SUBMISSIONS),
        ...serviceMsPer(before, after, SUBMISSIONS),
        publisher: generatorMs(ownStart, SUBMISSIONS),
      });
      return rate;
    };
    // The ceiling as first defined: a queue nobody consumes, so the broker only stores.
    const ceilingRate = await barePublisher('bench-ceiling');
    await channel.purgeQueue('bench-ceiling');
    // The same publisher under the API's conditions: onto the benchmark queue while the worker
    // runs what arrives (and writes its results), as it does during the API's run.
    const drainedCeilingRate = await barePublisher(QUEUE);
    await drained();
    report(
      `1. submissions  API (${fromSources ? 'sources through tsx' : 'compiled'}, ${env.API_PROCESSES ?? `${defaultApiProcesses()}, the installation default`} process(es)${apiFlags.length > 0 ? `, ${apiFlags.join(' ')}` : ''}) ${submitted.rps.toFixed(0)}/s (p50 ${submitted.p50ms.toFixed(1)} ms, p99 ${submitted.p99ms.toFixed(1)} ms, errors ${submitted.errors})` +
        ` | plain HTTP publish + insert ${plain.rps.toFixed(0)}/s (p50 ${plain.p50ms.toFixed(1)} ms, p99 ${plain.p99ms.toFixed(1)} ms, errors ${plain.errors})` +
        ` | ratio ${(submitted.rps / plain.rps).toFixed(2)}`,
    );
    report(`   API ${cpuLine(apiCpu)} | plain HTTP ${cpuLine(plainCpu)}`);
    recorder.add({
      what: 'task submissions, concurrency 32',
      ours: submitted.rps,
      unit: 'tasks/s',
      baseline: 'bare amqplib publisher with confirms onto the drained queue',
      baselineValue: drainedCeilingRate,
      goal: '≥ 0.3',
    });
    report(
      `   plain amqplib confirms (no HTTP, no database): onto an unconsumed queue ${ceilingRate.toFixed(0)}/s (API ratio ${(submitted.rps / ceilingRate).toFixed(2)})` +
        ` | onto the drained benchmark queue ${drainedCeilingRate.toFixed(0)}/s (API ratio ${(submitted.rps / drainedCeilingRate).toFixed(2)})`,
    );
    const publisherLine = (ms: Record<string, number> | undefined) =>
      ms === undefined
        ? ''
        : `publisher ${ms.publisher?.toFixed(2)}, worker ${ms.worker?.toFixed(2)}, database ${(ms.database ?? 0).toFixed(2)}, broker ${(ms.broker ?? 0).toFixed(2)}`;
    report(
      `   plain amqplib CPU ms/message: unconsumed ${publisherLine(publisherCpu.get('bench-ceiling'))} | drained ${publisherLine(publisherCpu.get(QUEUE))}`,
    );

    if (args.only === 'submissions') {
      await channel.close();
      return;
    }

    // 2. end-to-end latency with ?wait=
    await drained();
    const latency = await runLoad(
      LATENCY_RUNS,
      1,
      () => ({ method: 'POST', url: `${base}/api/queue/run/tasks.noop/?wait=10`, headers, body }),
      200,
    );
    report(
      `2. no-op with ?wait=  p50 ${latency.p50ms.toFixed(1)} ms, p99 ${latency.p99ms.toFixed(1)} ms over ${LATENCY_RUNS} sequential runs (errors ${latency.errors})`,
    );

    // 2b. canvas round trip: chain(add(1, 1), add(1), add(1)) on the TS worker, from publishing the
    // first step until the last step's SUCCESS is stored (results polled every 2 ms).
    const results = mongo.db(SERVICE_DB).collection<{ _id: string; status: string; result: string }>('tombstone');
    const step = (taskId: string) => ({
      task: 'tasks.add',
      args: [1],
      kwargs: {},
      options: { task_id: taskId, queue: QUEUE },
      subtask_type: null,
      immutable: false,
      chord_size: null,
    });
    const chainTimes: number[] = [];
    for (let i = 0; i < CHAIN_RUNS; i++) {
      const [second, third] = [randomUUID(), randomUUID()];
      const m = buildTaskMessage({
        taskName: 'tasks.add',
        args: [1, 1],
        embed: { callbacks: null, errbacks: null, chain: [step(third), step(second)], chord: null },
      });
      const started = process.hrtime.bigint();
      await new Promise<void>((ok, fail) =>
        channel.publish('', QUEUE, encodeTaskBody(m), taskPublishOptions(m), (e: unknown) => (e ? fail(e) : ok())),
      );
      for (;;) {
        const done = await results.findOne({ _id: third, status: 'SUCCESS' });
        if (done !== null) {
          if (done.result !== '4') throw new Error(`chain of 3 gave ${done.result}, not 4`);
          break;
        }
        if (Number(process.hrtime.bigint() - started) / 1e6 > 10_000) throw new Error('chain of 3 did not finish within 10 s');
        await new Promise((r) => setTimeout(r, 2));
      }
      if (i >= 5) chainTimes.push(Number(process.hrtime.bigint() - started) / 1e6); // the first runs warm up
    }
    chainTimes.sort((a, b) => a - b);
    const pct = (q: number) => chainTimes[Math.min(chainTimes.length - 1, Math.floor(q * chainTimes.length))]!;
    report(
      `2b. chain of 3 (TS worker)  p50 ${pct(0.5).toFixed(1)} ms, p99 ${pct(0.99).toFixed(1)} ms over ${chainTimes.length} sequential chains`,
    );
    await stop(worker);
    await stop(api);

    await workerThroughput();

    async function workerThroughput(): Promise<void> {
      // 3. worker throughput from a pre-filled queue
      async function prefill(queue: string, taskName: string): Promise<void> {
        for (let i = 0; i < TASKS; i += 500) {
          const batch: Promise<void>[] = [];
          for (let k = i; k < Math.min(TASKS, i + 500); k++) {
            const m = buildTaskMessage({ taskName });
            batch.push(
              new Promise<void>((ok, fail) =>
                channel.publish('', queue, encodeTaskBody(m), taskPublishOptions(m), (e: unknown) => (e ? fail(e) : ok())),
              ),
            );
          }
          await Promise.all(batch);
        }
      }
      /** Each run writes to its own result collection, so counting its documents is cheap. */
      async function measure(
        label: string,
        queue: string,
        taskName: string,
        start: (resultCollection: string) => ChildProcess,
      ): Promise<number> {
        const resultCollection = `results_${queue.replace(/-/g, '_')}_${Date.now()}`;
        const results = mongo.db(SERVICE_DB).collection(resultCollection);
        await prefill(queue, taskName);
        const child = start(resultCollection);
        children.push(child);
        // CPU from the first result on (the worker's start-up left out), per task done meanwhile.
        let doneBefore = 0;
        await waitFor(async () => (doneBefore = await results.estimatedDocumentCount()) >= 1, 600_000, `${label} to start`);
        const cpuBefore = cpuSnapshot();
        await waitFor(async () => (await results.estimatedDocumentCount()) >= TASKS, 600_000, `${label} to finish`);
        const cpuAfter = cpuSnapshot();
        await stop(child);
        const measuredTasks = Math.max(TASKS - doneBefore, 1);
        const workerMs = cpuMsPer(cpuBefore, cpuAfter, { worker: [child.pid as number] }, measuredTasks).worker ?? 0;
        const services = serviceMsPer(cpuBefore, cpuAfter, measuredTasks);
        const docs = await results.find({}, { projection: { date_done: 1 } }).toArray();
        const times = docs.map((d) => parseDateDone(d.date_done)).sort((a, b) => a - b);
        const seconds = ((times.at(-1) as number) - (times[0] as number)) / 1000;
        const rate = (TASKS - 1) / Math.max(seconds, 0.001);
        report(
          `3. ${label.padEnd(40)} ${rate.toFixed(0)} tasks/s (${TASKS} tasks in ${seconds.toFixed(2)} s); CPU per task: worker ` +
            `${workerMs.toFixed(2)} ms, database ${(services.database ?? 0).toFixed(2)} ms, broker ${(services.broker ?? 0).toFixed(2)} ms`,
        );
        cpuPerTask.set(label, workerMs);
        return rate;
      }
      /** The worker's CPU milliseconds per task of each measured run, by its label. */
      const cpuPerTask = new Map<string, number>();
      // The measured workers run as an installation runs them: the compiled build in production
      // mode (or, with --runner tsx, the sources through tsx).
      const compiled = fromSources ? undefined : await ensureServiceBuild();
      const tsWorker = (concurrency: number, resultCollection: string): ChildProcess => {
        const workerSettings = workerEnv('bench-ts', `bench-ts${concurrency}@localhost`, concurrency, resultCollection);
        return compiled === undefined
          ? spawnLogged(process.execPath, [...profiled, 'src/cli.ts', 'worker'], workerSettings)
          : spawnLogged(
              process.execPath,
              [...(PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`] : []), compiled.entry, 'worker'],
              {
                ...workerSettings,
                WORKER_TASK_MODULES: resolve('dist/worker-image/tasks/index.js'),
              },
            );
      };
      const tsRate1 = await measure('TypeScript worker (1 process, conc. 1)', 'bench-ts', 'tasks.noop', (rc) => tsWorker(1, rc));
      const tsRate2 = await measure('TypeScript worker (1 process, conc. 2)', 'bench-ts', 'tasks.noop', (rc) => tsWorker(2, rc));
      const tsRate = await measure('TypeScript worker (1 process, conc. 4)', 'bench-ts', 'tasks.noop', (rc) => tsWorker(4, rc));
      const venvCelery = resolve('.venv/bin/celery');
      if (!existsSync(venvCelery)) throw new Error('Python Celery is missing: run bash test/support/python-celery.sh');
      const { BROKER_URL, ...pyServices } = env;
      const pyEnv = (queue: string, resultCollection: string) => ({
        PATH: `${resolve('.venv/bin')}:${process.env.PATH ?? ''}`,
        HOME: process.env.HOME ?? '/tmp',
        PYTHONPATH: resolve('test/support/celery'),
        ...pyServices,
        INTEROP_BROKER_URL: BROKER_URL,
        RESULT_DATABASE: SERVICE_DB,
        RESULT_COLLECTION: resultCollection,
        INTEROP_QUEUE: queue,
      });
      const rates: number[] = [];
      for (const [conc, queue] of [
        [1, 'bench-py1'],
        [2, 'bench-py2'],
      ] as const) {
        rates.push(
          await measure(`Python Celery worker (prefork, conc. ${conc})`, queue, 'interop.noop', (rc) =>
            spawnLogged(
              venvCelery,
              interopWorkerArgs(conc, queue, `bench-py${conc}@localhost`),
              pyEnv(queue, rc),
              join(resolve('test/support/celery')),
            ),
          ),
        );
      }
      report(
        `   ratio TypeScript (conc. 4) / Python conc. 1: ${(tsRate / (rates[0] as number)).toFixed(2)}, / conc. 2: ${(tsRate / (rates[1] as number)).toFixed(2)}`,
      );
      report(
        `   ratio at the same concurrency, TypeScript conc. 1 / Python conc. 1: ${(tsRate1 / (rates[0] as number)).toFixed(2)}, conc. 2 / conc. 2: ${(tsRate2 / (rates[1] as number)).toFixed(2)}`,
      );
      for (const [concurrency, ts, py] of [
        [1, tsRate1, rates[0]],
        [2, tsRate2, rates[1]],
      ] as const) {
        recorder.add({
          what: `no-op tasks, one worker process, concurrency ${concurrency}`,
          ours: ts,
          unit: 'tasks/s',
          baseline: 'Celery prefork, same concurrency',
          baselineValue: py as number,
          goal: concurrency === 1 ? '≥ 2' : '≥ 1.5',
        });
      }
      // 3b. `cybercom worker` (the client's celery extra) beside a Celery worker configured by
      // hand (the interop tests' app), both from the client's venv: the same interpreter and
      // Celery, only the configuration differs (late acknowledgement, prefetch 1, task events and
      // the REVOKED check on ours). Rounds alternate; the ratio is of the medians.
      const clientVenv = resolve('.venv-client/bin');
      if (!existsSync(join(clientVenv, 'cybercom'))) {
        report('3b. cybercom worker: skipped, the client venv is missing (run bash test/support/python-client.sh)');
      } else {
        const clientPath = `${clientVenv}:${process.env.PATH ?? ''}`;
        const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
        const byHand: number[] = [];
        const byHandConventions: number[] = [];
        const ours: number[] = [];
        const handConfigured = (label: string, queue: string, conventions: boolean): Promise<number> =>
          measure(label, queue, 'interop.noop', (rc) =>
            spawnLogged(
              join(clientVenv, 'celery'),
              interopWorkerArgs(1, queue, `${queue}@localhost`),
              { ...pyEnv(queue, rc), PATH: clientPath, ...(conventions ? { INTEROP_SERVICE_CONVENTIONS: '1' } : {}) },
              resolve('test/support/celery'),
            ),
          );
        for (let round = 1; round <= 3; round += 1) {
          byHand.push(await handConfigured(`Celery by hand, its defaults (conc. 1) #${round}`, 'bench-hand', false));
          byHandConventions.push(await handConfigured(`Celery by hand, our conventions (conc. 1) #${round}`, 'bench-hand', true));
          ours.push(
            await measure(`cybercom worker (conc. 1) #${round}`, 'bench-cw', 'bench.noop', (rc) =>
              spawnLogged(
                join(clientVenv, 'cybercom'),
                [
                  'worker',
                  '-A',
                  'noop_tasks',
                  '-Q',
                  'bench-cw',
                  '-n',
                  'bench-cw@localhost',
                  '-c',
                  '1',
                  '--without-gossip',
                  '--without-mingle',
                  '-l',
                  'warn',
                ],
                {
                  PATH: clientPath,
                  HOME: process.env.HOME ?? '/tmp',
                  PYTHONPATH: resolve('bench/python'),
                  ...pyServices,
                  BROKER_URL,
                  RESULT_DATABASE: SERVICE_DB,
                  RESULT_COLLECTION: rc,
                },
                resolve('bench/python'),
              ),
            ),
          );
        }
        report(
          `   ratio cybercom worker / Celery by hand with the same conventions (late ack, prefetch 1, events, extended results), medians of 3 rounds: ${(median(ours) / median(byHandConventions)).toFixed(2)}`,
        );
        const cpuMedian = (prefix: string): number =>
          median([...cpuPerTask].filter(([label]) => label.startsWith(prefix)).map(([, ms]) => ms));
        report(
          `   worker CPU per task, medians of 3 rounds: cybercom worker ${cpuMedian('cybercom worker').toFixed(2)} ms, ` +
            `by hand with the same conventions ${cpuMedian('Celery by hand, our conventions').toFixed(2)} ms, ` +
            `by hand with its defaults ${cpuMedian('Celery by hand, its defaults').toFixed(2)} ms`,
        );
        report(
          `   ratio cybercom worker / Celery by hand with its defaults (early ack, prefetch 4, no events): ${(median(ours) / median(byHand)).toFixed(2)}`,
        );
        recorder.add({
          what: '`cybercom worker`, no-op tasks, concurrency 1, medians of 3 alternating rounds',
          ours: median(ours),
          unit: 'tasks/s',
          baseline: 'Celery configured by hand with the same conventions',
          baselineValue: median(byHandConventions),
          goal: '≥ 0.95',
        });
      }
      await channel.close();

      process.stdout.write(`\nQueue benchmark (${services.mongo.kind}, RabbitMQ over TLS, one machine)\n`);
      for (const l of lines) process.stdout.write(`${l}\n`);
    }
  } finally {
    // What was measured, also when a part was left out (--only) or a later part failed.
    recorder.save();
    for (const c of children) await stop(c);
    await broker.close().catch(() => undefined);
    await mongo.close();
    await services.stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
