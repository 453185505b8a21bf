/**
 * API footprint benchmark: memory and start-up of the service as the local runtime runs it.
 * Prints numbers and ratios; asserts nothing.
 *   start-up  from spawning `serve` to its first authenticated answer (GET /api/data_store/data/
 *             with a token: settings, database and broker connections, the auth stack, a route)
 *   idle RSS  of every process of the API (the primary and its API processes), 5 s after start-up;
 *             also their PSS, which counts the pages they share (the Node binary's) once
 *   load      5 rounds of the same load (record reads by _id, listings, inserts, concurrency 16);
 *             RSS of all processes 8 s after each round (the API gives a burst's memory back
 *             after 5 s of quiet), and the last against idle
 * The baseline, measured in the same run: a plain node:http server answering "ok" (the floor a
 * Node process costs). The old Django system's figures measured on the same machine kind are
 * printed as a reference (they cannot be measured here: no Python web stack runs in this run).
 * `--runner tsx` runs the sources through the tsx loader instead of the compiled build (what
 * the local runtime did before), for a before/after comparison.
 * Usage: npm run bench:footprint [-- --rounds 5 --requests 3000 --processes N --runner dist|tsx]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFile, readdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { startLocalServices } from '../src/local-services/services.js';
import { connectMongo } from '../src/db/mongo-client.js';
import { loadSettings } from '../src/config/settings.js';
import { createLogger } from '../src/log/logger.js';
import { createServiceContext } from '../src/app/service-context.js';
import { freePort } from '../src/local-services/ports.js';
import { ensureServiceBuild } from '../src/installation/runner/service-build.js';
import { ResultsRecorder } from './results.js';
import { runLoad, type RequestSpec } from './load.js';
import { benchServiceEnv, installedApiProcess, stop } from './processes.js';

const { values: args } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    requests: { type: 'string', default: '3000' },
    processes: { type: 'string' },
    runner: { type: 'string', default: 'dist' },
  },
});
const ROUNDS = Number(args.rounds);
const REQUESTS = Number(args.requests);
const SERVICE_DB = 'bench_footprint';
const DB = 'bench';
const COL = 'footprint';
/**
 * Constants, not measured by this run: the replaced Django system (gunicorn with 5 sync workers)
 * as measured earlier on this machine, side by side with the API on the same engine and broker.
 */
const OLD_SYSTEM = { idleMb: 344, startupS: 3.1 };

const PAGE_SIZE = 4096;

/**
 * Memory in MB of `pid` and all its descendants, from /proc: the sum of their RSS (what the goals
 * are stated in), and of their PSS, which counts a page shared by several processes (the Node
 * binary's own, about 40 MB in each) once in all.
 */
async function treeMemoryMb(pid: number): Promise<{ rss: number; pss: number }> {
  const parents = new Map<number, number>();
  const rss = new Map<number, number>();
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = await readFile(`/proc/${name}/stat`, 'utf8').catch(() => '');
    // Fields after the command (which may contain spaces) start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (fields.length < 22) continue;
    parents.set(Number(name), Number(fields[1]));
    rss.set(Number(name), (Number(fields[21]) * PAGE_SIZE) / 1024 / 1024);
  }
  const total = { rss: 0, pss: 0 };
  const queue = [pid];
  while (queue.length > 0) {
    const current = queue.pop() as number;
    total.rss += rss.get(current) ?? 0;
    const rollup = await readFile(`/proc/${current}/smaps_rollup`, 'utf8').catch(() => '');
    total.pss += Number(/^Pss:\s+(\d+) kB/m.exec(rollup)?.[1] ?? 0) / 1024;
    for (const [child, parent] of parents) if (parent === current) queue.push(child);
  }
  return total;
}

/** Spawns a server and polls `probe` every 20 ms; resolves with the time to its first 200. */
async function startTimed(
  command: string[],
  env: Record<string, string>,
  probe: RequestSpec,
): Promise<{ child: ChildProcess; ms: number }> {
  const started = performance.now();
  const child = spawn(command[0] as string, command.slice(1), { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'inherit'] });
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${command.join(' ')} exited with ${child.exitCode}`);
    const ok = await fetch(probe.url, { headers: probe.headers }).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) return { child, ms: performance.now() - started };
    if (Date.now() > deadline) throw new Error(`${command.join(' ')}: no answer within 60 s`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const mb = (n: number): string => `${n.toFixed(0).padStart(5)} MB`;

async function main(): Promise<void> {
  const runner = args.runner === 'tsx' ? 'tsx' : 'dist';
  process.stdout.write('Starting services (state in .state/bench)...\n');
  const services = await startLocalServices({ stateDir: '.state/bench', reuseCertificates: true });
  const extra: Record<string, string> = { NODE_ENV: 'production' };
  const env = benchServiceEnv(services.env(), SERVICE_DB, extra);
  // Without --processes the API sizes itself, as an installation does.
  if (args.processes === undefined) delete env.API_PROCESSES;
  else env.API_PROCESSES = args.processes;
  const settings = loadSettings(env);
  const mongo = await connectMongo(settings.mongo);
  let api: ChildProcess | undefined;
  let baseline: ChildProcess | undefined;
  try {
    await mongo.db(SERVICE_DB).dropDatabase();
    const collection = mongo.db(DB).collection(COL);
    await collection.drop().catch(() => undefined);
    await collection.insertMany(Array.from({ length: 2000 }, (_, i) => ({ n: i, note: `record ${i}`.padEnd(400, '.') })));
    const ids = (await collection.find({}, { projection: { _id: 1 } }).toArray()).map((d) => String(d._id));
    const ctx = await createServiceContext(settings, createLogger('warn'));
    await ctx.auth.users.ensureSuperuser({ username: 'bench', email: 'bench@example.org', password: 'bench-password-1' });
    const token = await ctx.auth.users.tokenFor('bench');
    await ctx.close();
    const headers = { authorization: `Token ${token}`, accept: 'application/json' };

    // Baseline: the smallest Node HTTP server.
    const basePort = await freePort();
    const plain = `require('node:http').createServer((q, s) => s.end('ok')).listen(${basePort}, '127.0.0.1')`;
    const base = await startTimed([process.execPath, '-e', plain], {}, { method: 'GET', url: `http://127.0.0.1:${basePort}/` });
    baseline = base.child;
    await sleep(2000);
    const baseMem = await treeMemoryMb(base.child.pid as number);
    const baseRss = baseMem.rss;

    // The API, as the local runtime starts it.
    const installed = installedApiProcess(
      runner === 'tsx'
        ? ['--import', resolve('node_modules/tsx/dist/loader.mjs'), resolve('src/cli.ts'), 'serve']
        : [(await ensureServiceBuild()).entry, 'serve'],
    );
    const port = await freePort();
    const baseUrl = `http://127.0.0.1:${port}`;
    const started = await startTimed(
      installed.command,
      { ...env, ...installed.env, HTTP_PORT: String(port), HTTP_HOST: '127.0.0.1' },
      {
        method: 'GET',
        url: `${baseUrl}/api/data_store/data/`,
        headers,
      },
    );
    api = started.child;
    await sleep(5000);
    const idleMem = await treeMemoryMb(api.pid as number);
    const idle = idleMem.rss;
    const make = (i: number): RequestSpec => {
      switch (i % 4) {
        case 0:
          return {
            method: 'POST',
            url: `${baseUrl}/api/data_store/data/${DB}/${COL}/`,
            headers: { ...headers, 'content-type': 'application/json' },
            body: JSON.stringify({ n: -i, note: 'x'.repeat(400) }),
          };
        case 1:
          return { method: 'GET', url: `${baseUrl}/api/data_store/data/${DB}/${COL}/?page_size=50&page=${(i % 40) + 1}`, headers };
        default:
          return { method: 'GET', url: `${baseUrl}/api/data_store/data/${DB}/${COL}/${ids[(i * 31) % ids.length]}/`, headers };
      }
    };
    const after: number[] = [];
    const afterPss: number[] = [];
    const rates: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const r = await runLoad(REQUESTS, 16, make, 200, 60_000);
      rates.push(r.rps);
      await sleep(8000);
      const mem = await treeMemoryMb(api.pid as number);
      after.push(mem.rss);
      afterPss.push(mem.pss);
    }

    const lines = [
      '',
      `API footprint (${runner === 'tsx' ? 'sources through tsx' : 'compiled build'}, API_PROCESSES=${env.API_PROCESSES ?? 'default'}, NODE_ENV=production)`,
      `  plain node:http server     start ${(base.ms / 1000).toFixed(2)} s   idle ${mb(baseRss)}   (PSS ${mb(baseMem.pss)})`,
      `  API                        start ${(started.ms / 1000).toFixed(2)} s   idle ${mb(idle)}   (${(idle / baseRss).toFixed(1)}x the plain server; PSS ${mb(idleMem.pss)})`,
      `  old system (measured earlier on this machine, not in this run)`,
      `    gunicorn, 5 workers      start ${OLD_SYSTEM.startupS.toFixed(2)} s   idle ${mb(OLD_SYSTEM.idleMb)}`,
      `  API / old system           start ${(started.ms / 1000 / OLD_SYSTEM.startupS).toFixed(2)}     idle ${(idle / OLD_SYSTEM.idleMb).toFixed(2)}   (goals: start <= 2 s, idle <= 0.60)`,
      ...after.map(
        (rss, i) =>
          `  after load round ${i + 1}         ${mb(rss)}   (${(rss / idle).toFixed(2)} of idle, ${rates[i]?.toFixed(0)} req/s; PSS ${mb(afterPss[i] ?? 0)})`,
      ),
      `  after ${ROUNDS} rounds / idle       ${((after.at(-1) ?? idle) / idle).toFixed(2)}   (goal <= 1.10)`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
    const recorder = new ResultsRecorder('api-footprint', 'npm run bench:footprint');
    const oldSystem = 'the old system (gunicorn, 5 workers), measured earlier on this machine kind';
    recorder.add({
      what: 'idle RSS, all API processes',
      ours: idle,
      unit: 'MB',
      baseline: oldSystem,
      baselineValue: OLD_SYSTEM.idleMb,
      goal: '≤ 0.60',
    });
    recorder.add({
      what: 'spawn to first authenticated answer',
      ours: started.ms / 1000,
      unit: 's',
      baseline: oldSystem,
      baselineValue: OLD_SYSTEM.startupS,
      goal: '≤ 2 s',
    });
    recorder.add({
      what: `RSS after ${ROUNDS} load rounds ÷ idle RSS`,
      ours: (after.at(-1) ?? idle) / idle,
      unit: '×',
      goal: '≤ 1.10',
    });
    recorder.save();
  } finally {
    if (api) await stop(api);
    if (baseline) await stop(baseline);
    await mongo.close();
    await services.stop();
  }
}

await main();
