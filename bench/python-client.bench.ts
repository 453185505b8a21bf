/**
 * Python client benchmark. Prints numbers and ratios; asserts nothing.
 * The researchers' client (clients/python) against the baselines a Python user would otherwise
 * reach for, in the same run, on the same engine and broker:
 *   insert      Collection.insert(records) vs pymongo insert_many straight into the database
 *   find        list(col.find({})) vs list(pymongo find)
 *   DataFrame   find().to_dataframe() vs pandas.DataFrame(list(pymongo find))
 *   CSV         pandas.read_csv(<collection>?format=csv) vs to_dataframe(); the API's RSS meanwhile
 *   submit      client.tasks.submit(...).result() vs Celery's send_task(...).get(), p50 of a no-op
 *               task run by one TypeScript worker, results in the same result store
 * Each phase runs in its own Python process (bench/python/client_bench.py), so the peak RSS it
 * prints is that phase's. The API and the worker run compiled, one API process.
 * Usage: npm run bench:client [-- --records 100000 --rounds 50 --repeats 3 --only insert,read,submit --api-flags=<node flags>]
 * BENCH_API_CPU_PROF=<dir> runs the API with --cpu-prof, its profile written there when it stops
 * (NODE_OPTIONS may not carry --cpu-prof). BENCH_PY_PROFILE=<dir> profiles each phase's timed
 * Python calls with cProfile (bench/python/client_bench.py), written there as .pstats files.
 */
import { execFile, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { startLocalServices } from '../src/local-services/services.js';
import { loadSettings } from '../src/config/settings.js';
import { createLogger } from '../src/log/logger.js';
import { createServiceContext } from '../src/app/service-context.js';
import { freePort } from '../src/local-services/ports.js';
import { ensureServiceBuild } from '../src/installation/runner/service-build.js';
import { cpuMsPer, cpuSnapshot, serviceMsPer } from './cpu-share.js';
import { benchServiceEnv, installedApiProcess, startChild, stop } from './processes.js';
import { ResultsRecorder } from './results.js';

const execFileAsync = promisify(execFile);
const { values: args } = parseArgs({
  options: {
    records: { type: 'string', default: '100000' },
    rounds: { type: 'string', default: '50' },
    only: { type: 'string' },
    /** Rounds of the insert and of the read phases, alternating between the client and its baseline. */
    repeats: { type: 'string', default: '3' },
    /** Node flags for the API process, before the defaults (an operator's flag wins), e.g. `--api-flags=--max-semi-space-size=16`. */
    'api-flags': { type: 'string', default: '' },
  },
});
/** The parts --only may name; the read parts need the collection the insert part fills. */
const PARTS = ['insert', 'read', 'submit'] as const;
const only = args.only?.split(',');
if (only?.some((part) => !(PARTS as readonly string[]).includes(part))) throw new Error(`--only takes ${PARTS.join(', ')}`);
const runs = (part: (typeof PARTS)[number]): boolean =>
  only === undefined || only.includes(part) || (part === 'insert' && only.includes('read'));
const repeats = Number(args.repeats);
const apiFlags = args['api-flags'].split(/\s+/).filter((flag) => flag.length > 0);
const SERVICE_DB = 'bench_client_service';
const DB = 'bench_client';
const QUEUE = 'bench-client';
const VENV = resolve('.venv-bench');

/** A virtualenv with the client (and pandas), pymongo and the baseline Celery: made once. */
async function benchVenv(): Promise<string> {
  const python = join(VENV, 'bin', 'python');
  if (!existsSync(join(VENV, '.bench-ready'))) {
    process.stdout.write('Creating .venv-bench (client, pandas, pymongo, Celery)...\n');
    await execFileAsync('python3', ['-m', 'venv', VENV]);
    await execFileAsync(
      python,
      [
        '-m',
        'pip',
        'install',
        '--quiet',
        '--disable-pip-version-check',
        '-e',
        'clients/python[pandas]',
        '-r',
        'test/support/celery/requirements.txt',
      ],
      { maxBuffer: 16 * 1024 * 1024 },
    );
    await execFileAsync('touch', [join(VENV, '.bench-ready')]);
  }
  return python;
}

/**
 * Waits until the database engine this process started uses under a tenth of a core for a second
 * (at most a minute); returns the seconds waited.
 */
async function engineQuiet(): Promise<number> {
  const started = Date.now();
  let quietSamples = 0;
  while (quietSamples < 2 && Date.now() - started < 60_000) {
    const before = cpuSnapshot();
    await new Promise((resolve) => setTimeout(resolve, 500));
    const busyMs = serviceMsPer(before, cpuSnapshot(), 1).database ?? 0;
    quietSamples = busyMs < 50 ? quietSamples + 1 : 0;
  }
  return (Date.now() - started) / 1000;
}

/** RSS in MB of one process. */
async function rssMb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

type Phase = Record<string, number | string>;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

async function main(): Promise<void> {
  const python = await benchVenv();
  process.stdout.write('Starting services (state in .state/bench)...\n');
  const services = await startLocalServices({ stateDir: '.state/bench', reuseCertificates: true });
  const env = benchServiceEnv(services.env(), SERVICE_DB, { NODE_ENV: 'production' });
  const settings = loadSettings(env);
  const children: ChildProcess[] = [];
  try {
    const ctx = await createServiceContext(settings, createLogger('warn'));
    await ctx.auth.users.ensureSuperuser({ username: 'bench', email: 'bench@example.org', password: 'bench-password-1' });
    const token = await ctx.auth.users.tokenFor('bench');
    await ctx.close();
    const { entry } = await ensureServiceBuild();
    const port = await freePort();
    const profileDir = process.env.BENCH_API_CPU_PROF;
    const installed = installedApiProcess([
      ...apiFlags,
      ...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []),
      entry,
      'serve',
    ]);
    const api = await startChild(
      installed.command,
      { ...env, ...installed.env, HTTP_PORT: String(port), HTTP_HOST: '127.0.0.1', LOG_LEVEL: 'info' },
      /API server listening/,
    );
    children.push(api.child);
    const worker = await startChild(
      [process.execPath, entry, 'worker'],
      {
        ...env,
        WORKER_TASK_MODULES: resolve('dist/worker-image/tasks/index.js'),
        WORKER_QUEUES: QUEUE,
        WORKER_NODE_NAME: 'bench-client@localhost',
        RESULT_DATABASE: SERVICE_DB,
        LOG_LEVEL: 'info',
      },
      /worker ready/,
    );
    children.push(worker.child);

    const { BROKER_URL, ...servicesEnv } = services.env();
    const pythonEnv: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: process.env.HOME ?? '/tmp',
      PYTHONPATH: resolve('test/support/celery'),
      ...servicesEnv,
      INTEROP_BROKER_URL: BROKER_URL,
      RESULT_DATABASE: SERVICE_DB,
      RESULT_COLLECTION: 'tombstone',
      INTEROP_QUEUE: QUEUE,
      CYBERCOM_URL: `http://127.0.0.1:${port}`,
      CYBERCOM_TOKEN: token,
      BENCH_DB: DB,
      RECORDS: args.records,
      ROUNDS: args.rounds,
      ...(process.env.BENCH_PY_PROFILE ? { BENCH_PY_PROFILE: resolve(process.env.BENCH_PY_PROFILE) } : {}),
    };
    // The collection the client writes into must exist; the baselines' collection is dropped by them.
    const apiPost = (path: string, body: unknown): Promise<Response> =>
      fetch(`http://127.0.0.1:${port}${path}`, {
        method: 'POST',
        headers: { authorization: `Token ${token}`, accept: 'application/json', 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    await apiPost('/api/data_store/data/', { action: 'delete', database: DB });
    await apiPost('/api/data_store/data/', { database: DB });
    await apiPost(`/api/data_store/data/${DB}/`, { collection: 'client' });

    const run = async (phase: string): Promise<Phase> => {
      process.stdout.write(`  ${phase}...\n`);
      const { stdout } = await execFileAsync(python, [resolve('bench/python/client_bench.py'), phase], {
        env: pythonEnv,
        maxBuffer: 16 * 1024 * 1024,
      });
      return JSON.parse(stdout.trim().split('\n').at(-1) as string) as Phase;
    };
    const n = (p: Phase, key: string): number => Number(p[key]);
    // Where an insert's CPU goes: the Python process, the API and the database engine, in seconds.
    const cpuOf = async (phase: string): Promise<[Phase, string]> => {
      const before = cpuSnapshot();
      const result = await run(phase);
      const after = cpuSnapshot();
      const apiSeconds = cpuMsPer(before, after, { api: [api.child.pid as number] }, 1000).api ?? 0;
      const database = serviceMsPer(before, after, 1000).database ?? 0;
      return [
        result,
        `CPU s: Python ${n(result, 'cpu_seconds').toFixed(2)}, API ${apiSeconds.toFixed(2)}, database ${database.toFixed(2)}`,
      ];
    };
    const f = (x: number, digits = 0): string => x.toFixed(digits);
    const recorder = new ResultsRecorder('python-client', 'npm run bench:client');
    const lines = ['', `Python client, ${args.records} records of ~1 KB (ratios: client / baseline; goal in brackets)`];
    // The baseline's rate swings by a quarter from one run to the next on this kind of machine
    // (the engine's own state: checkpoints, autovacuum): phases run `repeats` rounds, alternating
    // between the client and its baseline, and the medians are compared.
    type Round = Record<string, { result: Phase; cpu: string }>;
    const alternate = async (phases: string[]): Promise<Round[]> => {
      const rounds: Round[] = [];
      for (let round = 0; round < repeats; round += 1) {
        const measured: Round = {};
        for (const phase of phases) {
          const [result, cpu] = await cpuOf(phase);
          measured[phase] = { result, cpu };
        }
        rounds.push(measured);
      }
      return rounds;
    };
    /** The value of `key` in `phase`'s output: each round's, and their median. */
    const values = (rounds: Round[], phase: string, key: string): number[] => rounds.map((r) => n(r[phase]!.result, key));
    const medianOf = (rounds: Round[], phase: string, key: string): number => median(values(rounds, phase, key));
    const eachRatio = (rounds: Round[], [phase, key]: [string, string], [base, baseKey]: [string, string]): string => {
      const baseline = values(rounds, base, baseKey);
      return values(rounds, phase, key)
        .map((value, i) => f(value / (baseline[i] as number), 2))
        .join(', ');
    };
    if (runs('insert')) {
      const rounds = await alternate(['insert-pymongo', 'insert-client']);
      const clientRate = medianOf(rounds, 'insert-client', 'rate');
      const mongoRate = medianOf(rounds, 'insert-pymongo', 'rate');
      const last = rounds.at(-1)!;
      lines.push(
        `  insert       client ${f(clientRate)} rec/s   pymongo insert_many ${f(mongoRate)} rec/s   ratio ${f(clientRate / mongoRate, 2)} (>= 0.85)   medians of ${rounds.length} alternating rounds`,
        `               each round: ${eachRatio(rounds, ['insert-client', 'rate'], ['insert-pymongo', 'rate'])}`,
        `               last round: client ${last['insert-client']!.cpu}   pymongo ${last['insert-pymongo']!.cpu}`,
      );
      recorder.add({
        what: `col.insert(records), ${args.records} records, medians of ${rounds.length} alternating rounds`,
        ours: clientRate,
        unit: 'records/s',
        baseline: 'pymongo insert_many',
        baselineValue: mongoRate,
        goal: '≥ 0.85',
      });
    }
    if (runs('read')) {
      // The inserts leave the engine busy for a while (autovacuum, checkpoints): reads start once it is quiet.
      const waited = await engineQuiet();
      // find-pymongo times list(find) and then pandas.DataFrame of another find: its CPU covers both.
      const rounds = await alternate(['find-pymongo', 'find-client', 'frame-client']);
      const findRate = medianOf(rounds, 'find-client', 'rate');
      const mongoRate = medianOf(rounds, 'find-pymongo', 'rate');
      const frameSeconds = medianOf(rounds, 'frame-client', 'seconds');
      const mongoFrameSeconds = medianOf(rounds, 'find-pymongo', 'frame_seconds');
      const last = rounds.at(-1)!;
      const apiIdle = await rssMb(api.child.pid as number);
      let apiPeak = apiIdle;
      const sampler = setInterval(() => void rssMb(api.child.pid as number).then((mb) => (apiPeak = Math.max(apiPeak, mb))), 100);
      const csv = await run('csv-pandas').finally(() => clearInterval(sampler));
      lines.push(
        `  (reads began after ${f(waited, 1)} s waiting for the engine to be quiet; medians of ${rounds.length} alternating rounds)`,
        `  find         client ${f(findRate)} rec/s   pymongo find ${f(mongoRate)} rec/s   ratio ${f(findRate / mongoRate, 2)} (>= 0.70)   client peak RSS ${f(n(last['find-client']!.result, 'peak_rss_mb'))} MB`,
        `               each round: ${eachRatio(rounds, ['find-client', 'rate'], ['find-pymongo', 'rate'])}`,
        `               last round: client ${last['find-client']!.cpu}   pymongo (find, then DataFrame) ${last['find-pymongo']!.cpu}`,
        `  DataFrame    to_dataframe ${f(frameSeconds, 2)} s   pandas.DataFrame(pymongo) ${f(mongoFrameSeconds, 2)} s   ratio ${f(frameSeconds / mongoFrameSeconds, 2)} (<= 1.1)   client peak RSS ${f(n(last['frame-client']!.result, 'peak_rss_mb'))} MB`,
        `               each round: ${eachRatio(rounds, ['frame-client', 'seconds'], ['find-pymongo', 'frame_seconds'])}`,
        `               last round: client ${last['frame-client']!.cpu}`,
        `  CSV          read_csv ${f(n(csv, 'seconds'), 2)} s   to_dataframe ${f(frameSeconds, 2)} s   ratio ${f(n(csv, 'seconds') / frameSeconds, 2)} (<= 1.5)   API RSS ${f(apiIdle)} MB before, ${f(apiPeak)} MB peak`,
      );
      const medians = `${args.records} records, medians of ${rounds.length} alternating rounds`;
      recorder.add({
        what: `list(col.find({})), ${medians}`,
        ours: findRate,
        unit: 'records/s',
        baseline: 'pymongo find',
        baselineValue: mongoRate,
        goal: '≥ 0.7',
      });
      recorder.add({
        what: `to_dataframe(), ${medians}`,
        ours: frameSeconds,
        unit: 's',
        baseline: 'pandas.DataFrame(list(pymongo find))',
        baselineValue: mongoFrameSeconds,
        goal: '≤ 1.1 (time)',
      });
      recorder.add({
        what: 'pandas.read_csv of the CSV export',
        ours: n(csv, 'seconds'),
        unit: 's',
        baseline: 'to_dataframe() of the same run',
        baselineValue: frameSeconds,
        goal: '≤ 1.5 (time)',
      });
    }
    if (runs('submit')) {
      const submitCelery = await run('submit-celery');
      const submitClient = await run('submit-client');
      lines.push(
        `  submit p50   client ${f(n(submitClient, 'p50_ms'), 1)} ms   Celery send_task().get() ${f(n(submitCelery, 'p50_ms'), 1)} ms   ratio ${f(n(submitClient, 'p50_ms') / n(submitCelery, 'p50_ms'), 2)} (<= 1.5)`,
      );
      recorder.add({
        what: 'tasks.submit(...).result(), no-op, p50',
        ours: n(submitClient, 'p50_ms'),
        unit: 'ms',
        baseline: 'Celery send_task(...).get()',
        baselineValue: n(submitCelery, 'p50_ms'),
        goal: '≤ 1.5 (time)',
      });
    }
    // What the API keeps once the work is over: it gives a burst's memory back when it has been quiet for a while.
    const apiBusy = await rssMb(api.child.pid as number);
    await new Promise((resolve) => setTimeout(resolve, 5000));
    lines.push(`  API RSS      ${f(apiBusy)} MB right after the last phase, ${f(await rssMb(api.child.pid as number))} MB after 5 s idle`);
    process.stdout.write(`${lines.join('\n')}\n`);
    recorder.save();
  } finally {
    for (const child of children) await stop(child);
    await services.stop();
  }
}

await main();
