/**
 * Data-store benchmark. Prints numbers and ratios; asserts nothing.
 *   (a) GET a page of 50 (and its count) with a filter on an indexed field
 *   (r) GET a page of 50 (and its count) with a range filter and a sort on an indexed field
 *   (a') GET a page filtered on _id: isolates the API's own overhead when the database answers fast
 *   (d) GET one record by its _id (/<db>/<col>/<id>/)
 *   (b) page_size=0 of the whole collection, with the server process's peak RSS
 *   (c) POST of 1,000-record arrays
 *   (s) POST of one record, at concurrency 1 and at --concurrency, with the database commands
 *       each server's driver started per request (command monitoring) and the engine's
 *       transactions per request (each command the engine runs is a PostgreSQL transaction)
 * Each beside a baseline measured in the same run: the same query made directly with the
 * mongodb driver in a plain Node http server (bench/baseline-server.ts). At the end, the memory
 * (PSS of every engine process) and disk use of the database engine after the load.
 * The GET phases, (c) and each concurrency of (s) run --rounds alternating rounds and record the
 * median one; each round of a GET phase and of (s) stops after --requests or --seconds / --rounds,
 * whichever comes first. Each phase
 * also prints the CPU milliseconds per request of the API server and of the baseline server.
 * The API runs as the local runtime runs it: the compiled build with its Node flags and
 * allocator settings, NODE_ENV=production.
 * To compare two commits: `--api-checkout DIR` starts the API from another checkout of the project
 * (its sources compiled into its dist/, its node_modules, with DIR as its working directory) and everything else (the
 * services, the data, the baseline, the load, the method) from this one; such a run's results are
 * printed, not recorded. Phase (s) is refused then (its command counting is this checkout's).
 * Usage: npm run bench [-- --records 100000 --concurrency 16 --seconds 60 --rounds 3 --warmup 10 --only "a,r,a',d,b,c,s" --api-checkout DIR]
 */
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import type { ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { startLocalServices } from '../src/local-services/services.js';
import { connectMongo } from '../src/db/mongo-client.js';
import { loadSettings } from '../src/config/settings.js';
import { createLogger } from '../src/log/logger.js';
import { createServiceContext } from '../src/app/service-context.js';
import { freePort } from '../src/local-services/ports.js';
import { runLoad, type LoadResult, type RequestSpec } from './load.js';
import { cpuMsPer, cpuSnapshot, serviceMsPer } from './cpu-share.js';
import { startChild, stop, benchServiceEnv, installedApi } from './processes.js';
import { ResultsRecorder } from './results.js';

const { values: args } = parseArgs({
  options: {
    records: { type: 'string', default: '100000' },
    concurrency: { type: 'string', default: '16' },
    requests: { type: 'string', default: '2000' },
    seconds: { type: 'string', default: '60' },
    only: { type: 'string', default: "a,r,a',d,b,c,s" },
    rounds: { type: 'string', default: '3' },
    warmup: { type: 'string', default: '10' },
    'api-checkout': { type: 'string' },
  },
});
/** The checkout the API is started from (see the header): this one unless --api-checkout names another. */
const API_DIR = resolve(args['api-checkout'] ?? '.');
const OTHER_API = args['api-checkout'] !== undefined;
const RECORDS = Number(args.records);
const CONCURRENCY = Number(args.concurrency);
const REQUESTS = Number(args.requests);
const BUDGET_MS = Number(args.seconds) * 1000;
/**
 * Each server of a GET phase and of (s) is loaded this long before it is measured: a server that
 * answers for hours runs optimised code, and its first thousands of requests do not (the API's
 * CPU per read fell by a fifth between the first and the second 15,000 reads after a 200-request
 * warm-up, the baseline's by a third).
 */
const WARMUP_MS = Number(args.warmup) * 1000;
/** A warm-up is a length of time, not a number of requests. */
const UNTIL_WARM = Number.MAX_SAFE_INTEGER;
/**
 * The warm-up alternates between the two servers in slices of this length. Warmed one after
 * the other, the server warmed first sat idle for the whole of the other's warm-up, and its first
 * measured round ran at about half the rate of its later ones (the API after 30 s of warm-up:
 * 1,070 req/s, then 1,220, 1,340, 1,960). Slices keep each server's idle time what it is
 * between rounds.
 */
const WARMUP_SLICE_MS = 1_000;

/** WARMUP_MS of load on each server, in alternating slices (see WARMUP_SLICE_MS). */
async function warmUp(ours: () => Promise<LoadResult>, base: () => Promise<LoadResult>): Promise<void> {
  for (let spent = 0; spent < WARMUP_MS; spent += WARMUP_SLICE_MS) {
    await base();
    await ours();
  }
}
const PHASES = new Set(String(args.only).split(','));
if (OTHER_API && PHASES.has('s')) {
  process.stderr.write(
    `phase (s) preloads this checkout's bench/command-count.ts, which does not count another checkout's driver: leave it out with --api-checkout\n`,
  );
  process.exit(2);
}
/** Alternating rounds of the GET phases, (c) and (s): ours, baseline, baseline, ours, … */
const ROUNDS = Math.max(1, Number(args.rounds));
/** Rates below 10/s keep two decimals (the whole-collection phase). */
const rate = (rps: number): string => rps.toFixed(rps < 10 ? 2 : 0).padStart(7);
const SITES = 50;
const DB = 'bench';
const COL = 'records';

/** CPU ms per request of a server (its process and children) and of the database engine this process started. */
interface CpuPer {
  server: number;
  engine: number;
  /** This process: the load generator, which shares the machine's cores with the servers. */
  load: number;
}

/**
 * Starts counting a server's CPU and the engine's; the returned function gives ms per request.
 * The engine's counts everything it ran meanwhile: the server's requests and its background
 * work (the API's scheduler and cache leases), as a server that runs them costs it.
 */
function cpuOf(pid: number): (requests: number) => CpuPer {
  const before = cpuSnapshot();
  const ownBefore = process.cpuUsage();
  return (requests) => {
    const after = cpuSnapshot();
    const own = process.cpuUsage(ownBefore);
    const n = Math.max(requests, 1);
    return {
      server: cpuMsPer(before, after, { server: [pid] }, n).server ?? 0,
      engine: serviceMsPer(before, after, n).database ?? 0,
      load: (own.user + own.system) / 1000 / n,
    };
  };
}

const cpuRow = (api: CpuPer, base: CpuPer): string =>
  `    CPU per request: api ${api.server.toFixed(2)} ms, baseline ${base.server.toFixed(2)} ms; engine ${api.engine.toFixed(2)} ms through the api, ${base.engine.toFixed(2)} ms through the baseline; load generator ${api.load.toFixed(2)} ms, ${base.load.toFixed(2)} ms`;

function padding(i: number): string {
  return `record-${i}-`.padEnd(900, 'abcdefghijklmnopqrstuvwxyz0123456789');
}

function makeRecord(i: number): Record<string, unknown> {
  return {
    n: i,
    site: `site-${i % SITES}`,
    // A double in every record: the POST phase's bodies hold fractional literals, so their cost
    // (src/documents/number-literals.ts) is measured.
    value: Math.sin(i),
    when: new Date(1_700_000_000_000 + i * 1000).toISOString(),
    note: padding(i),
  };
}

function peakRssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return kb / 1024;
}

const recorder = new ResultsRecorder('documents', 'npm run bench');
const BASELINE = 'the driver behind plain node:http';

/** A phase's line; its rate goes into the results too (with its goal, when it has one) unless `recorded` is false. */
function row(name: string, r: LoadResult, base: LoadResult, recorded = true, goal?: string): string {
  const ratio = r.rps / base.rps;
  if (recorded) {
    recorder.add({
      what: name,
      ours: r.rps,
      unit: 'req/s',
      baseline: BASELINE,
      baselineValue: base.rps,
      ...(goal === undefined ? {} : { goal }),
    });
  }
  return [
    name.padEnd(34),
    `${rate(r.rps)} req/s`,
    `p50 ${r.p50ms.toFixed(1).padStart(7)} ms`,
    `p99 ${r.p99ms.toFixed(1).padStart(7)} ms`,
    `n ${r.requests}`,
    `errors ${r.errors}`,
    `| baseline ${rate(base.rps)} req/s p50 ${base.p50ms.toFixed(1)} ms p99 ${base.p99ms.toFixed(1)} ms`,
    `| ratio ${ratio.toFixed(2)}`,
  ].join('  ');
}

/** One round of a phase: ours and the baseline's load results and CPU per request. */
interface Round {
  ours: LoadResult;
  base: LoadResult;
  oursCpu: CpuPer;
  baseCpu: CpuPer;
}

/**
 * ROUNDS rounds of a phase on running servers, the order alternating (ours then the baseline,
 * then the baseline then ours, …), so that a machine whose speed drifts during the phase weighs
 * on both alike.
 */
async function alternatingRounds(
  oursPid: number,
  basePid: number,
  ours: () => Promise<LoadResult>,
  base: () => Promise<LoadResult>,
): Promise<Round[]> {
  const measure = async (pid: number, load: () => Promise<LoadResult>): Promise<[LoadResult, CpuPer]> => {
    const cpu = cpuOf(pid);
    const r = await load();
    return [r, cpu(r.requests)];
  };
  const rounds: Round[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    let oursRun: [LoadResult, CpuPer];
    let baseRun: [LoadResult, CpuPer];
    if (i % 2 === 0) {
      oursRun = await measure(oursPid, ours);
      baseRun = await measure(basePid, base);
    } else {
      baseRun = await measure(basePid, base);
      oursRun = await measure(oursPid, ours);
    }
    rounds.push({ ours: oursRun[0], oursCpu: oursRun[1], base: baseRun[0], baseCpu: baseRun[1] });
  }
  return rounds;
}

/** The round whose ratio is the median of the rounds' ratios (the lower middle one of an even number). */
function medianRound(rounds: readonly Round[]): Round {
  const sorted = [...rounds].sort((x, y) => x.ours.rps / x.base.rps - y.ours.rps / y.base.rps);
  return sorted[Math.floor((sorted.length - 1) / 2)] as Round;
}

/**
 * A phase's recorded line (its median round) with every round's ratio, rates and servers' CPU per
 * request (the spread of the CPU is what a change to the request path is weighed against), and
 * the median round's CPU per request.
 */
function roundsRows(what: string, rounds: readonly Round[], goal?: string): string[] {
  const median = medianRound(rounds);
  const ratios = rounds
    .map(
      (r) =>
        `${(r.ours.rps / r.base.rps).toFixed(2)} (${rate(r.ours.rps).trim()}/${rate(r.base.rps).trim()} req/s, ${r.oursCpu.server.toFixed(2)}/${r.baseCpu.server.toFixed(2)} ms)`,
    )
    .join(', ');
  return [
    row(what, median.ours, median.base, true, goal),
    `    ${rounds.length} alternating rounds, ratios ${ratios}; the median round above`,
    cpuRow(median.oursCpu, median.baseCpu),
  ];
}

/** Processes whose command line names `dir`, with all their descendants (PostgreSQL's backends). */
function engineProcesses(dir: string): number[] {
  const parents = new Map<number, number>();
  const roots: number[] = [];
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      parents.set(pid, Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(dir)) roots.push(pid);
    } catch {
      // exited meanwhile
    }
  }
  const found = new Set(roots);
  for (let grew = true; grew;) {
    grew = false;
    for (const [pid, parent] of parents) {
      if (!found.has(pid) && found.has(parent)) {
        found.add(pid);
        grew = true;
      }
    }
  }
  return [...found];
}

/** Memory as PSS (shared pages counted once across PostgreSQL's processes) and disk of the engine. */
function engineFootprint(dir: string): string {
  let pssKiB = 0;
  const pids = engineProcesses(dir);
  for (const pid of pids) {
    try {
      pssKiB += Number(/^Pss:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1] ?? 0);
    } catch {
      // exited meanwhile
    }
  }
  const du = (path: string): string => {
    try {
      return execFileSync('du', ['-sh', path], { encoding: 'utf8' }).split('\t')[0] ?? '?';
    } catch {
      return '?';
    }
  };
  return `Engine after the load: ${pids.length} processes, memory ${(pssKiB / 1024).toFixed(0)} MiB (PSS); disk ${du(dir)} (write-ahead log ${du(`${dir}/postgres/data/pg_wal`)})`;
}

/**
 * Transactions the engine's PostgreSQL cluster has committed or rolled back, read as the cluster's
 * OS user (the one peer login it admits). Its backends report their counts when idle, at the
 * latest after ten seconds (PostgreSQL's PGSTAT_IDLE_INTERVAL): read after a pause, a difference
 * counts every command the engine ran in between, background jobs included.
 */
async function engineTransactions(engineDir: string): Promise<number> {
  await sleep(11_000);
  const cluster = resolve(engineDir, 'postgres');
  const port = /^port = (\d+)$/m.exec(readFileSync(`${cluster}/data/cybercom.conf`, 'utf8'))?.[1] ?? '';
  const sql = "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = 'postgres'";
  const psql = [
    '/usr/lib/postgresql/15/bin/psql',
    '-X',
    '-tA',
    '-h',
    `${cluster}/socket`,
    '-p',
    port,
    '-U',
    'postgres',
    '-d',
    'postgres',
    '-c',
    sql,
  ];
  const command = process.getuid?.() === 0 ? ['setpriv', '--reuid=postgres', '--regid=postgres', '--init-groups', '--', ...psql] : psql;
  return Number(execFileSync(command[0] as string, command.slice(1), { encoding: 'utf8' }).trim());
}

/** A server's database commands so far, by name (bench/command-count.ts writes them on SIGUSR2). */
async function commandCounts(child: ChildProcess, file: string): Promise<Record<string, number>> {
  rmSync(file, { force: true });
  child.kill('SIGUSR2');
  for (let waited = 0; !existsSync(file); waited += 20) {
    if (waited > 5_000) throw new Error(`no command counts in ${file}`);
    await sleep(20);
  }
  await sleep(20);
  return JSON.parse(readFileSync(file, 'utf8')) as Record<string, number>;
}

/** The commands of a run per request: their total, then each by name (`1.00 (insert 1.00)`). */
function commandsPer(before: Record<string, number>, after: Record<string, number>, requests: number): string {
  const per = Object.entries(after)
    .map(([name, n]) => [name, (n - (before[name] ?? 0)) / Math.max(requests, 1)] as const)
    .filter(([, n]) => n > 0)
    .sort((x, y) => y[1] - x[1]);
  const total = per.reduce((sum, [, n]) => sum + n, 0);
  return `${total.toFixed(2)} (${per.map(([name, n]) => `${name} ${n.toFixed(3)}`).join(', ')})`;
}

/** The commit a checkout is at, and `+changes` when its work tree differs from it. */
function checkoutCommit(dir: string): string {
  const git = (...a: string[]): string => execFileSync('git', ['-C', dir, ...a], { encoding: 'utf8' }).trim();
  try {
    return `${git('rev-parse', '--short', 'HEAD')}${git('status', '--porcelain', '--untracked-files=no') === '' ? '' : ' +changes'}`;
  } catch {
    return 'an unknown commit';
  }
}

async function main(): Promise<void> {
  process.stdout.write(`Starting services (state in .state/bench)...\n`);
  const services = await startLocalServices({ stateDir: '.state/bench', reuseCertificates: true });
  const env = benchServiceEnv(services.env(), 'bench_service');
  const settings = loadSettings(env);
  const client = await connectMongo(settings.mongo);
  try {
    const collection = client.db(DB).collection(COL);
    await client.db(DB).dropDatabase();
    process.stdout.write(`Loading ${RECORDS} records of ~1 KB...\n`);
    const t0 = Date.now();
    for (let i = 0; i < RECORDS; i += 5000) {
      await collection.insertMany(Array.from({ length: Math.min(5000, RECORDS - i) }, (_, k) => makeRecord(i + k)));
    }
    await collection.createIndex({ site: 1 });
    await collection.createIndex({ n: 1 });
    const ids = (
      await collection
        .find({}, { projection: { _id: 1 } })
        .limit(1000)
        .toArray()
    ).map((d) => String(d._id));
    process.stdout.write(`Loaded in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);

    const ctx = await createServiceContext(settings, createLogger('warn'));
    await ctx.auth.users.ensureSuperuser({ username: 'bench', email: 'bench@example.org', password: 'bench-password-1' });
    const token = await ctx.auth.users.tokenFor('bench');
    await ctx.close();

    const apiPort = await freePort();
    const basePort = await freePort();
    // tsx's own entry (not npx), so SIGTERM reaches the server and its port is free afterwards.
    const tsx = resolve('node_modules/tsx/dist/cli.mjs');
    // BENCH_CPU_PROFILE_DIR=<dir>: the API writes V8 CPU profiles there, the baseline into
    // <dir>/baseline (tsx's CLI would run each in a child process, so the loader is imported into
    // the profiled process instead).
    const profileDir = process.env.BENCH_CPU_PROFILE_DIR;
    const profiling = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
    // The API as the local runtime runs it: the compiled build, its Node flags and allocator
    // settings, NODE_ENV=production.
    const installed = await installedApi(profiling, API_DIR);
    const apiCmd = installed.command;
    const apiEnv = {
      ...env,
      ...installed.env,
      HTTP_PORT: String(apiPort),
      HTTP_HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
    };
    const baseCmd = profileDir
      ? [process.execPath, '--cpu-prof', `--cpu-prof-dir=${profileDir}/baseline`, '--import', 'tsx', 'bench/baseline-server.ts']
      : [process.execPath, tsx, 'bench/baseline-server.ts'];
    const startApi = () => startChild(apiCmd, apiEnv, /API server listening/, API_DIR);
    const startBase = () => startChild(baseCmd, { ...env, PORT: String(basePort), BENCH_DB: DB, BENCH_COLLECTION: COL }, /LISTENING/);
    const auth = { authorization: `Token ${token}`, accept: 'application/json' };
    const api = `http://127.0.0.1:${apiPort}/api/data_store/data/${DB}/${COL}/`;
    const base = `http://127.0.0.1:${basePort}`;
    const site = (i: number) => `site-${i % SITES}`;
    const results: string[] = [];

    /**
     * One GET phase: fresh API and baseline processes, a warm-up of each, then ROUNDS alternating
     * rounds (see medianRound), each of --requests requests or --seconds / ROUNDS seconds.
     */
    const compareGets = async (name: string, apiUrl: (i: number) => string, baseUrl: (i: number) => string): Promise<void> => {
      const a = await startApi();
      const b = await startBase();
      const what = `${name}, concurrency ${CONCURRENCY}`;
      const viaApi = (i: number): RequestSpec => ({ method: 'GET', url: apiUrl(i), headers: auth });
      const viaBase = (i: number): RequestSpec => ({ method: 'GET', url: baseUrl(i) });
      await warmUp(
        () => runLoad(UNTIL_WARM, CONCURRENCY, viaApi, 200, WARMUP_SLICE_MS),
        () => runLoad(UNTIL_WARM, CONCURRENCY, viaBase, 200, WARMUP_SLICE_MS),
      );
      const rounds = await alternatingRounds(
        a.child.pid as number,
        b.child.pid as number,
        () => runLoad(REQUESTS, CONCURRENCY, viaApi, 200, BUDGET_MS / ROUNDS),
        () => runLoad(REQUESTS, CONCURRENCY, viaBase, 200, BUDGET_MS / ROUNDS),
      );
      results.push(...roundsRows(what, rounds));
      await stop(a.child);
      await stop(b.child);
    };
    const query = (value: unknown): string => encodeURIComponent(JSON.stringify(value));

    // (a) filtered pages of 50
    if (PHASES.has('a')) {
      await compareGets(
        '(a) GET page of 50, indexed filter',
        (i) => `${api}?page_size=50&query=${query({ filter: { site: site(i) } })}`,
        (i) => `${base}/page?site=${site(i)}`,
      );
    }

    // (a') a page filtered on _id: the API's own overhead when the database answers fast
    if (PHASES.has("a'")) {
      const id = (i: number) => ids[i % ids.length] as string;
      await compareGets(
        "(a') GET filter on _id",
        (i) => `${api}?page_size=50&query=${query({ filter: { _id: { $oid: id(i) } } })}`,
        (i) => `${base}/by-id?id=${id(i)}`,
      );
    }

    // (r) range filter + sort on an indexed field, pages of 50
    if (PHASES.has('r')) {
      // Thresholds spread over the collection: each page is the 50 records after a random point.
      const from = (i: number) => (i * 7919) % RECORDS;
      await compareGets(
        '(r) GET page of 50, range + sort',
        (i) => `${api}?page_size=50&query=${query({ filter: { n: { $gt: from(i) } }, sort: { n: 1 } })}`,
        (i) => `${base}/range?gt=${from(i)}`,
      );
    }

    // (d) one record by its _id, the record URL a script uses
    if (PHASES.has('d')) {
      const id = (i: number) => ids[(i * 31) % ids.length] as string;
      await compareGets(
        '(d) GET one record by _id',
        (i) => `${api}${id(i)}/`,
        (i) => `${base}/record?id=${id(i)}`,
      );
    }

    // (b) the whole collection streamed, in fresh processes so peak RSS belongs to this test
    if (PHASES.has('b')) {
      const a = await startApi();
      await runLoad(5, 1, () => ({ method: 'GET', url: `${api}?page_size=5`, headers: auth }));
      const rssBefore = peakRssMiB(a.child.pid as number);
      const r = await runLoad(3, 1, () => ({ method: 'GET', url: `${api}?page_size=0`, headers: auth }));
      const rssApi = peakRssMiB(a.child.pid as number);
      await stop(a.child);
      const b = await startBase();
      await runLoad(5, 1, () => ({ method: 'GET', url: `${base}/page?site=site-1` }));
      const baseBefore = peakRssMiB(b.child.pid as number);
      const rb = await runLoad(3, 1, () => ({ method: 'GET', url: `${base}/all` }));
      const rssBase = peakRssMiB(b.child.pid as number);
      await stop(b.child);
      results.push(row('(b) page_size=0, whole collection', r, rb, false));
      recorder.add({
        what: `(b) page_size=0, whole collection of ${RECORDS} records, p50`,
        ours: r.p50ms / 1000,
        unit: 's',
        baseline: BASELINE,
        baselineValue: rb.p50ms / 1000,
      });
      results.push(
        `    peak RSS (VmHWM) api ${rssBefore.toFixed(0)} → ${rssApi.toFixed(0)} MiB, baseline ${baseBefore.toFixed(0)} → ${rssBase.toFixed(0)} MiB; body ${(r.bytes / 3 / 1048576).toFixed(1)} MiB per response`,
      );
    }

    // (c) POST arrays of 1,000 records
    if (PHASES.has('c')) {
      await collection.deleteMany({ bulk: true });
      const a = await startApi();
      const b = await startBase();
      const body = JSON.stringify(Array.from({ length: 1000 }, (_, i) => ({ ...makeRecord(i), bulk: true })));
      const posts = Math.max(20, Math.floor(REQUESTS / 50));
      const headers = { ...auth, 'content-type': 'application/json' };
      const viaApi = (): RequestSpec => ({ method: 'POST', url: api, headers, body });
      const viaBase = (): RequestSpec => ({ method: 'POST', url: `${base}/insert`, headers: { 'content-type': 'application/json' }, body });
      await warmUp(
        () => runLoad(UNTIL_WARM, 4, viaApi, 201, WARMUP_SLICE_MS),
        () => runLoad(UNTIL_WARM, 4, viaBase, 201, WARMUP_SLICE_MS),
      );
      const rounds = await alternatingRounds(
        a.child.pid as number,
        b.child.pid as number,
        () => runLoad(posts, 4, viaApi, 201),
        () => runLoad(posts, 4, viaBase, 201),
      );
      results.push(...roundsRows('(c) POST 1,000-record arrays, concurrency 4', rounds, '≥ 0.9'));
      const { ours: r, base: rb } = medianRound(rounds);
      results.push(`    = ${(r.rps * 1000).toFixed(0)} records/s through the API, ${(rb.rps * 1000).toFixed(0)} records/s baseline`);
      await stop(a.child);
      await stop(b.child);
    }

    // (s) POST of one record (a sensor posting each reading), with the engine's work per request
    if (PHASES.has('s')) {
      const engineDir = resolve('.state/bench/mongo');
      // Both servers count the commands their driver starts (bench/command-count.ts): run by
      // Node itself (tsx as a loader, not its CLI, which would serve from a child process) so
      // that SIGUSR2 reaches the process that counts.
      const counted = (command: readonly string[]) => [
        command[0] as string,
        '--import',
        'tsx',
        '--import',
        './bench/command-count.ts',
        ...command.slice(1),
      ];
      const monitored = (uri: string): string => `${uri}${uri.includes('?') ? '&' : '?'}monitorCommands=true`;
      const countEnv = (name: string): Record<string, string> => {
        const out: Record<string, string> = { BENCH_COMMAND_COUNT_FILE: resolve(`.state/bench/commands-${name}.json`) };
        for (const key of ['MONGO_URI', 'PRIVATE_MONGO_URI']) {
          const uri = env[key];
          if (uri !== undefined) out[key] = monitored(uri);
        }
        return out;
      };
      const apiCounts = countEnv('api');
      const baseEnv = countEnv('baseline');
      const a = await startChild(counted(apiCmd), { ...apiEnv, ...apiCounts }, /API server listening/);
      const b = await startChild(
        counted([
          process.execPath,
          ...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}/baseline`] : []),
          'bench/baseline-server.ts',
        ]),
        { ...env, ...baseEnv, PORT: String(basePort), BENCH_DB: DB, BENCH_COLLECTION: COL },
        /LISTENING/,
      );
      const headers = { ...auth, 'content-type': 'application/json' };
      const viaApi = (i: number): RequestSpec => ({
        method: 'POST',
        url: api,
        headers,
        body: JSON.stringify({ ...makeRecord(i), single: true }),
      });
      const viaBase = (i: number): RequestSpec => ({
        method: 'POST',
        url: `${base}/insert-one`,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ...makeRecord(i), single: true }),
      });
      await warmUp(
        () => runLoad(UNTIL_WARM, CONCURRENCY, viaApi, 201, WARMUP_SLICE_MS),
        () => runLoad(UNTIL_WARM, CONCURRENCY, viaBase, 201, WARMUP_SLICE_MS),
      );
      /**
       * A load on one server that also notes, per run, the database commands its driver started
       * and the engine's transactions per request; runs are noted in the order of the rounds.
       */
      const counting = (child: ChildProcess, countFile: string, load: () => Promise<LoadResult>) => {
        const runs: { commands: string; transactions: number }[] = [];
        const run = async (): Promise<LoadResult> => {
          const transactions = await engineTransactions(engineDir);
          const commands = await commandCounts(child, countFile);
          const r = await load();
          runs.push({
            commands: commandsPer(commands, await commandCounts(child, countFile), r.requests),
            transactions: ((await engineTransactions(engineDir)) - transactions) / r.requests,
          });
          return r;
        };
        return { run, runs };
      };
      for (const concurrency of [1, CONCURRENCY]) {
        const ours = counting(a.child, apiCounts.BENCH_COMMAND_COUNT_FILE as string, () =>
          runLoad(REQUESTS, concurrency, viaApi, 201, BUDGET_MS / ROUNDS),
        );
        const theirs = counting(b.child, baseEnv.BENCH_COMMAND_COUNT_FILE as string, () =>
          runLoad(REQUESTS, concurrency, viaBase, 201, BUDGET_MS / ROUNDS),
        );
        const rounds = await alternatingRounds(a.child.pid as number, b.child.pid as number, ours.run, theirs.run);
        results.push(...roundsRows(`(s) POST one record, concurrency ${concurrency}`, rounds, concurrency === 1 ? undefined : '≥ 0.55'));
        const median = rounds.indexOf(medianRound(rounds));
        const [oursCounts, theirCounts] = [ours.runs[median], theirs.runs[median]];
        results.push(`    database commands per request: api ${oursCounts?.commands}; baseline ${theirCounts?.commands}`);
        results.push(
          `    engine transactions per request: api ${oursCounts?.transactions.toFixed(2)}, baseline ${theirCounts?.transactions.toFixed(2)}`,
        );
      }
      await stop(a.child);
      await stop(b.child);
      await collection.deleteMany({ single: true });
    }

    process.stdout.write(`\nData-store benchmark: ${RECORDS} records, concurrency ${CONCURRENCY}, ${services.mongo.kind} over TLS\n`);
    process.stdout.write(`The API from ${API_DIR} at ${checkoutCommit(API_DIR)}\n`);
    for (const line of results) process.stdout.write(`${line}\n`);
    process.stdout.write(`${engineFootprint(resolve('.state/bench/mongo'))}\n`);
    // Another checkout's figures are not this commit's: the results table does not get them.
    if (OTHER_API) process.stdout.write('results not recorded (--api-checkout)\n');
    else recorder.save();
  } finally {
    await client.close();
    await services.stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
