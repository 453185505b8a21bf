/**
 * Mixed-use footprint benchmark: the API's memory through the kind of afternoon a research group
 * gives it, not only through simple reads. Prints numbers; asserts nothing.
 *
 * A fresh API process (as an installation starts it, one process, the default memory settings)
 * and one worker, on 100,000 records of varied shape (nested sites, dates, GeoJSON points, one
 * record of 1 MB). Each round runs, one after another:
 *   admin     session login, the admin site's page and its scripts, the users list
 *   explorer  the table, schema, chart and map tabs of the collection, and the map's geometries
 *   exports   the whole collection as CSV and as NDJSON (read to the end, not kept)
 *   tasks     TASKS submissions with ?wait (16 at a time), each answered with its result
 *   wheel     the Python client's wheel from the package index
 *   upload    a 10 MB POST of 10,000 records
 * After each step: the API's RSS, its V8 heap in use, its external memory and the ArrayBuffers
 * part of that (from its own metrics), its peak RSS (VmHWM), and the RSS of the admin site's
 * process while one runs (it makes the AdminJS pages, started by the first and stopped after
 * ADMIN_IDLE_EXIT_S without one); after the rounds, the same 10 s later, against the fresh
 * process at idle; the summary goes to bench/results/mixed-use.json.
 * Goals: the API's RSS after the rounds <= 1.3x fresh idle, its peak <= 300 MB.
 *
 * `--steps` runs only the named steps (to see what one of them does alone), `--identity` asks
 * for every answer uncompressed (to see what compression costs); neither records a result.
 *
 *   npm run bench:mixed-use [-- --rounds 5 --records 100000 --tasks 1000 --steps exports,upload --identity]
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
import { defaultBundleDir, ensureComponentsBundle } from '../src/admin/bundle.js';
import { benchServiceEnv, installedApiProcess, stop } from './processes.js';
import { ResultsRecorder } from './results.js';

const { values: args } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    records: { type: 'string', default: '100000' },
    tasks: { type: 'string', default: '1000' },
    steps: { type: 'string' },
    identity: { type: 'boolean', default: false },
  },
});
const ROUNDS = Number(args.rounds);
const RECORDS = Number(args.records);
const TASKS = Number(args.tasks);
const ONLY = args.steps?.split(',').map((name) => name.trim());
/** What every request says of compression: undici's fetch asks for gzip, deflate and br unless told. */
const ACCEPT_ENCODING: Record<string, string> = args.identity ? { 'accept-encoding': 'identity' } : {};
const SERVICE_DB = 'bench_mixed_use';
const DB = 'bench';
const COL = 'mixed';
const UPLOADS = 'mixed_uploads';
const QUEUE = 'bench-mixed';
const USER = { username: 'bench', email: 'bench@example.org', password: 'bench-password-1' };

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The API process's memory: RSS and peak RSS from /proc, the rest from its metrics. */
interface Memory {
  rssMb: number;
  peakMb: number;
  heapMb: number;
  heapCommittedMb: number;
  externalMb: number;
  arrayBuffersMb: number;
}

async function memoryOf(pid: number, base: string, headers: Record<string, string>): Promise<Memory> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0);
  const metrics = await fetch(`${base}/api/metrics/`, { headers: { ...headers, accept: 'text/plain' } }).then((r) => r.text());
  if (process.env.BENCH_VERBOSE) {
    const majors = /^nodejs_gc_duration_seconds_count\{kind="major"\}\s+(\d+)/m.exec(metrics)?.[1];
    process.stdout.write(`    major collections so far: ${majors ?? '?'}\n`);
  }
  const mb = (metric: string): number => Number(new RegExp(`^${metric}\\s+([\\d.e+]+)`, 'm').exec(metrics)?.[1] ?? NaN) / 1024 / 1024;
  return {
    rssMb: kb('VmRSS') / 1024,
    peakMb: kb('VmHWM') / 1024,
    heapMb: mb('nodejs_heap_size_used_bytes'),
    heapCommittedMb: mb('nodejs_heap_size_total_bytes'),
    externalMb: mb('nodejs_external_memory_bytes'),
    arrayBuffersMb: mb('nodejs_array_buffers_bytes'),
  };
}

/**
 * Where a process's resident memory is, from /proc/<pid>/smaps, in MB: malloc's main arena
 * ([heap]), anonymous mappings (V8's heap, malloc's other arenas and large blocks, thread
 * stacks) and files (the Node binary and libraries). With BENCH_VERBOSE, the largest anonymous
 * mappings too (malloc's arenas are 64 MB reservations; V8's pages are 256 KB).
 */
async function residentParts(pid: number): Promise<Record<string, number>> {
  const parts: Record<string, number> = { '[heap]': 0, anonymous: 0, files: 0 };
  let part = 'anonymous';
  let mapping = '';
  const anonymous: { mapping: string; rssMb: number }[] = [];
  for (const line of (await readFile(`/proc/${pid}/smaps`, 'utf8')).split('\n')) {
    const range = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \d+\s*(.*)$/.exec(line);
    if (range !== null) {
      const name = (range[3] as string).trim();
      part = name === '[heap]' ? '[heap]' : name.startsWith('/') ? 'files' : 'anonymous';
      const size = Number.parseInt(range[2] as string, 16) - Number.parseInt(range[1] as string, 16);
      mapping = `${(size / 1024 / 1024).toFixed(2)} MB ${name}`;
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss === null) continue;
    parts[part] = (parts[part] ?? 0) + Number(rss[1]) / 1024;
    if (part === 'anonymous') anonymous.push({ mapping, rssMb: Number(rss[1]) / 1024 });
  }
  if (process.env.BENCH_VERBOSE) {
    const largest = anonymous.sort((a, b) => b.rssMb - a.rssMb).slice(0, 8);
    process.stdout.write(`    largest anonymous: ${largest.map((a) => `${a.rssMb.toFixed(1)} of ${a.mapping}`).join('; ')}\n`);
  }
  return parts;
}

/** The admin site's process started by the API process `pid`, if one runs: its RSS and peak RSS. */
async function adminProcessMemory(pid: number): Promise<{ rssMb: number; peakMb: number } | undefined> {
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = await readFile(`/proc/${entry}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) !== pid) continue;
      if (!(await readFile(`/proc/${entry}/cmdline`, 'utf8')).includes('admin-child')) continue;
      const status = await readFile(`/proc/${entry}/status`, 'utf8');
      const kb = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0);
      return { rssMb: kb('VmRSS') / 1024, peakMb: kb('VmHWM') / 1024 };
    } catch {
      // gone meanwhile
    }
  }
  return undefined;
}

/** Reads an answer to its end without keeping it; fails on anything but 2xx. */
async function drain(response: Response, what: string): Promise<number> {
  if (!response.ok) throw new Error(`${what}: ${response.status} ${(await response.text()).slice(0, 300)}`);
  let bytes = 0;
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) bytes += chunk.byteLength;
  return bytes;
}

/** A cookie jar of one browser session. */
class Session {
  private readonly cookies = new Map<string, string>();
  constructor(private readonly base: string) {}
  async fetch(path: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers({ ...ACCEPT_ENCODING, ...Object.fromEntries(new Headers(init.headers)) });
    if (this.cookies.size > 0) headers.set('cookie', [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '));
    const response = await fetch(new URL(path, this.base), { ...init, headers, redirect: 'manual' });
    for (const line of response.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const eq = pair.indexOf('=');
      this.cookies.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
    }
    return response;
  }
}

function record(i: number): Record<string, unknown> {
  return {
    station: String(i % 997).padStart(5, '0'),
    taken: new Date(Date.UTC(2024, 0, 1) + i * 60_000),
    temp: i % 10 === 0 ? 21.0 : ((i * 7919) % 4000) / 100 - 5,
    site: { name: `site-${i % 53}`, elevation: (i * 13) % 3000, tags: ['a', 'b', `t${i % 7}`] },
    location: { type: 'Point', coordinates: [-97 + ((i * 17) % 1000) / 1000, 35 + ((i * 29) % 1000) / 1000] },
    ...(i % 100 === 0 ? {} : { humidity: (i * 31) % 100 }),
    note: `reading ${i}`,
  };
}

async function main(): Promise<void> {
  process.stdout.write('Starting services (state in .state/bench)...\n');
  const services = await startLocalServices({ stateDir: '.state/bench', reuseCertificates: true });
  const env = benchServiceEnv(services.env(), SERVICE_DB, { NODE_ENV: 'production' });
  const settings = loadSettings(env);
  const mongo = await connectMongo(settings.mongo);
  const children: ChildProcess[] = [];
  try {
    await mongo.db(SERVICE_DB).dropDatabase();
    await mongo
      .db(DB)
      .collection(COL)
      .drop()
      .catch(() => undefined);
    await mongo
      .db(DB)
      .collection(UPLOADS)
      .drop()
      .catch(() => undefined);
    process.stdout.write(`Seeding ${RECORDS} records...\n`);
    const collection = mongo.db(DB).collection(COL);
    for (let from = 0; from < RECORDS; from += 5000) {
      await collection.insertMany(Array.from({ length: Math.min(5000, RECORDS - from) }, (_, k) => record(from + k)));
    }
    await collection.insertOne({ ...record(RECORDS), big: 'x'.repeat(1024 * 1024) });
    await mongo.db(DB).createCollection(UPLOADS);
    const ctx = await createServiceContext(settings, createLogger('warn'));
    await ctx.auth.users.ensureSuperuser(USER);
    const token = await ctx.auth.users.tokenFor(USER.username);
    await ctx.close();
    const headers = { authorization: `Token ${token}`, accept: 'application/json', ...ACCEPT_ENCODING };

    const { entry } = await ensureServiceBuild();
    // As an installation does, the admin site's components are bundled before the API starts.
    await ensureComponentsBundle(defaultBundleDir());
    const installed = installedApiProcess([entry, 'serve']);
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const api = spawn(installed.command[0] as string, installed.command.slice(1), {
      env: { ...process.env, ...env, ...installed.env, HTTP_PORT: String(port), HTTP_HOST: '127.0.0.1' },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    children.push(api);
    const worker = spawn(process.execPath, [entry, 'worker'], {
      env: {
        ...process.env,
        ...env,
        WORKER_TASK_MODULES: resolve('dist/worker-image/tasks/index.js'),
        WORKER_QUEUES: QUEUE,
        WORKER_NODE_NAME: 'bench-mixed@localhost',
        WORKER_CONCURRENCY: '4',
        RESULT_DATABASE: SERVICE_DB,
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    children.push(worker);
    for (let waited = 0; ; waited += 200) {
      const up = await fetch(`${base}/api/queue/?refresh=true`, { headers }).then(
        async (r) => r.ok && ((await r.json()) as { queues?: string[] }).queues?.includes(QUEUE) === true,
        () => false,
      );
      if (up) break;
      if (waited > 90_000) throw new Error('the API and the worker did not come up in 90 s');
      await sleep(200);
    }
    await sleep(5000);
    const pid = api.pid as number;
    const fresh = await memoryOf(pid, base, headers);
    const lines: string[] = [];
    let adminPeakMb = 0;
    const show = async (label: string, m: Memory): Promise<void> => {
      const admin = await adminProcessMemory(pid);
      adminPeakMb = Math.max(adminPeakMb, admin?.peakMb ?? 0);
      const adminColumn = admin === undefined ? 'admin process: none' : `admin process RSS ${admin.rssMb.toFixed(0).padStart(4)} MB`;
      const mb = (value: number): string => `${value.toFixed(0).padStart(4)} MB`;
      const line = `  ${label.padEnd(28)} RSS ${mb(m.rssMb)}   heap ${mb(m.heapMb)} of ${mb(m.heapCommittedMb)}   external ${mb(m.externalMb)} (ArrayBuffers ${mb(m.arrayBuffersMb)})   peak ${mb(m.peakMb)}   ${adminColumn}`;
      lines.push(line);
      process.stdout.write(`${line}\n`);
    };
    await show('fresh, idle', fresh);
    // After every step too: whether what grows is V8's heap or malloc's.
    const showParts = async (label: string): Promise<void> => {
      const parts = Object.entries(await residentParts(pid)).map(([name, mb]) => `${name} ${mb.toFixed(0)} MB`);
      const line = `  ${label.padEnd(28)} resident: ${parts.join(', ')}`;
      lines.push(line);
      process.stdout.write(`${line}\n`);
    };
    await showParts('fresh, idle');

    const explore = `/api/explore/data_store/${DB}/${COL}/`;
    const records = `/api/data_store/data/${DB}/${COL}/`;
    const allSteps: [string, () => Promise<void>][] = [
      [
        'admin',
        async () => {
          const session = new Session(base);
          const login = await session.fetch('/api/auth/login/', {
            method: 'POST',
            headers: { 'content-type': 'application/json', accept: 'application/json' },
            body: JSON.stringify({ username: USER.username, password: USER.password }),
          });
          await drain(login, 'login');
          const page = await session.fetch('/api/admin', { headers: { accept: 'text/html' } });
          if (!page.ok) throw new Error(`admin page: ${page.status}`);
          const html = await page.text();
          for (const src of html.matchAll(/<script[^>]+src="([^"]+)"/g)) {
            const started = performance.now();
            await drain(await session.fetch(src[1] as string), `admin script ${src[1]}`);
            if (process.env.BENCH_VERBOSE) process.stdout.write(`    ${src[1]} ${(performance.now() - started).toFixed(0)} ms\n`);
          }
          await drain(await session.fetch('/api/admin/api/resources/User/actions/list'), 'admin users list');
        },
      ],
      [
        'explorer',
        async () => {
          for (const tab of ['table', 'schema', 'chart', 'map']) {
            await drain(await fetch(`${base}${explore}?tab=${tab}`, { headers: { ...headers, accept: 'text/html' } }), `explorer ${tab}`);
          }
          await drain(await fetch(`${base}/api/explore/geometries/data_store/${DB}/${COL}/?geo=location`, { headers }), 'geometries');
        },
      ],
      [
        'exports',
        async () => {
          await drain(await fetch(`${base}${records}?format=csv&page_size=0`, { headers }), 'CSV export');
          await drain(await fetch(`${base}${records}?format=ndjson&page_size=0`, { headers }), 'NDJSON export');
        },
      ],
      [
        'tasks',
        async () => {
          let next = 0;
          const body = JSON.stringify({ function: 'tasks.noop', queue: QUEUE, args: [], kwargs: {} });
          await Promise.all(
            Array.from({ length: 16 }, async () => {
              while (next < TASKS) {
                next += 1;
                const r = await fetch(`${base}/api/queue/run/tasks.noop/?wait=30`, {
                  method: 'POST',
                  headers: { ...headers, 'content-type': 'application/json' },
                  body,
                });
                await drain(r, 'task submission');
              }
            }),
          );
        },
      ],
      [
        'wheel',
        async () => {
          const index = await fetch(`${base}/api/client/python/simple/cybercom/`, {
            headers: { accept: 'text/html', ...ACCEPT_ENCODING },
          }).then((r) => r.text());
          const href = /href="([^"]+\.whl)[^"]*"/.exec(index)?.[1];
          if (href === undefined) throw new Error('no wheel in the package index');
          await drain(await fetch(new URL(href, `${base}/api/client/python/simple/cybercom/`), { headers: ACCEPT_ENCODING }), 'wheel');
        },
      ],
      [
        'upload',
        async () => {
          const batch = JSON.stringify(Array.from({ length: 10_000 }, (_, i) => ({ ...record(i), note: 'n'.repeat(800) })));
          const r = await fetch(`${base}/api/data_store/data/${DB}/${UPLOADS}/`, {
            method: 'POST',
            headers: { ...headers, 'content-type': 'application/json' },
            body: batch,
          });
          await drain(r, '10 MB upload');
        },
      ],
    ];

    const steps = allSteps.filter(([name]) => ONLY === undefined || ONLY.includes(name));
    if (steps.length === 0) throw new Error(`--steps names none of ${allSteps.map(([name]) => name).join(', ')}`);
    for (let round = 1; round <= ROUNDS; round++) {
      for (const [name, step] of steps) {
        const started = performance.now();
        await step();
        const label = `round ${round} ${name} (${((performance.now() - started) / 1000).toFixed(1)} s)`;
        await show(label, await memoryOf(pid, base, headers));
        await showParts(label);
      }
    }
    await sleep(10_000);
    const after = await memoryOf(pid, base, headers);
    await show(`${ROUNDS} rounds, 10 s idle`, after);
    await showParts(`${ROUNDS} rounds, 10 s idle`);
    const summary = [
      '',
      `Mixed use (${RECORDS} records, ${TASKS} tasks a round, ${ROUNDS} rounds; one API process, default memory settings)`,
      `  RSS after / fresh idle   ${(after.rssMb / fresh.rssMb).toFixed(2)}   (goal <= 1.30)`,
      `  peak RSS                 ${after.peakMb.toFixed(0)} MB   (goal <= 300 MB)`,
      `  admin process peak RSS   ${adminPeakMb.toFixed(0)} MB   (a process of its own while admin pages are made)`,
    ];
    process.stdout.write(`${summary.join('\n')}\n`);
    if (ONLY !== undefined || args.identity) {
      process.stdout.write('(a part of the session or uncompressed answers: not recorded)\n');
      return;
    }
    const recorder = new ResultsRecorder('mixed-use', 'npm run bench:mixed-use');
    const note = `${RECORDS} records, ${TASKS} tasks a round, ${ROUNDS} rounds`;
    recorder.add({
      what: 'mixed use: API RSS after the rounds and 10 s idle',
      ours: after.rssMb,
      unit: 'MB',
      baseline: 'the same process fresh, at idle',
      baselineValue: fresh.rssMb,
      goal: '≤ 1.30',
      note,
    });
    recorder.add({ what: 'mixed use: API peak RSS (VmHWM)', ours: after.peakMb, unit: 'MB', goal: '≤ 300 MB', note });
    recorder.add({ what: "mixed use: the admin site's process, peak RSS", ours: adminPeakMb, unit: 'MB', note });
    recorder.save();
  } finally {
    for (const child of children) await stop(child);
    await mongo.close();
    await services.stop();
  }
}

await main();
