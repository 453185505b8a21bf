/**
 * Task-history benchmark: one user with a long history (100,000 entries by default), and the
 * latency of `GET /api/queue/usertasks/` pages through the API process, filtered by state or not.
 * The history is written straight into the database (the log entries, and result documents the
 * way Celery's MongoDB backend writes them), mostly finished tasks plus `--unfinished` queued or
 * running ones, whose states the API re-reads from the results on every filtered request.
 * For comparison it also times, with the driver alone and in the same run, (1) for each phase the
 * database part of how a page used to be read: the count and the page sorted from every match
 * (`driver, full sort`, with the ratio API ÷ that), and (2) what the state filter did before
 * states were kept: read every id of the user's history and every id's result state.
 * Prints numbers and asserts nothing.
 * Usage: npm run bench:history [-- --entries 100000 --unfinished 200 --requests 40]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { parseArgs } from 'node:util';
import type { Document } from 'mongodb';
import { startLocalServices } from '../src/local-services/services.js';
import { loadSettings } from '../src/config/settings.js';
import { connectMongo } from '../src/db/mongo-client.js';
import { createLogger } from '../src/log/logger.js';
import { createServiceContext } from '../src/app/service-context.js';
import { freePort } from '../src/local-services/ports.js';
import { benchServiceEnv, installedApi } from './processes.js';
import { runLoad } from './load.js';

const { values: args } = parseArgs({
  options: {
    entries: { type: 'string', default: '100000' },
    unfinished: { type: 'string', default: '200' },
    requests: { type: 'string', default: '40' },
  },
});
const ENTRIES = Number(args.entries);
const UNFINISHED = Number(args.unfinished);
const REQUESTS = Number(args.requests);
const SERVICE_DB = 'bench_history';
const USER = 'historian';
const PAGE_SIZE = 20;

/** Log entries and result documents both have string ids (the task id). */
type BenchDocument = Document & { _id: string };

/** Finished states in proportion (80 % SUCCESS, 15 % FAILURE, 5 % REVOKED); the unfinished are spread evenly. */
function stateOf(i: number): string | null {
  const every = Math.max(1, Math.floor(ENTRIES / Math.max(1, UNFINISHED)));
  if (UNFINISHED > 0 && i % every === every - 1 && Math.floor(i / every) < UNFINISHED) return Math.floor(i / every) % 2 ? 'STARTED' : null;
  const r = i % 20;
  return r < 16 ? 'SUCCESS' : r < 19 ? 'FAILURE' : 'REVOKED';
}

async function main(): Promise<void> {
  process.stdout.write('Starting services (state in .state/bench-history)...\n');
  const services = await startLocalServices({ stateDir: '.state/bench-history', reuseCertificates: true });
  const env = benchServiceEnv(services.env(), SERVICE_DB);
  const settings = loadSettings(env);
  const mongo = await connectMongo(settings.mongo);
  let api: ChildProcess | undefined;
  try {
    const db = mongo.db(SERVICE_DB);
    await db.dropDatabase();
    const ctx = await createServiceContext(settings, createLogger('warn'));
    await ctx.auth.users.createUser({ username: USER, password: 'bench-password-1' });
    const token = await ctx.auth.users.tokenFor(USER);
    await ctx.queue?.log.ensureIndexes();
    await ctx.close();

    const started = Date.now();
    const log = db.collection<BenchDocument>('task_log');
    const results = db.collection<BenchDocument>(settings.resultCollection);
    const now = Date.now();
    for (let from = 0; from < ENTRIES; from += 5_000) {
      const entries: BenchDocument[] = [];
      const docs: BenchDocument[] = [];
      for (let i = from; i < Math.min(ENTRIES, from + 5_000); i++) {
        const id = `bench-${String(i).padStart(7, '0')}`;
        const state = stateOf(i);
        entries.push({
          _id: id,
          task_id: id,
          user: USER,
          task_name: i % 3 ? 'tasks.add' : 'tasks.noop',
          args: [i, 1],
          kwargs: {},
          queue: 'celery',
          tags: i % 10 ? [] : ['tenth'],
          timestamp: new Date(now - i * 1000),
          state: state !== null && ['SUCCESS', 'FAILURE', 'REVOKED'].includes(state) ? state : 'PENDING',
        });
        if (state !== null)
          docs.push({
            _id: id,
            status: state,
            result: state === 'SUCCESS' ? String(i + 1) : 'null',
            traceback: null,
            children: [],
            date_done: state === 'STARTED' ? null : '2024-06-19T19:23:24.611000',
          });
      }
      await log.insertMany(entries, { ordered: false });
      if (docs.length > 0) await results.insertMany(docs, { ordered: false });
    }
    // Other users' history shares the collection.
    await log.insertMany(
      Array.from({ length: 5_000 }, (_, i) => ({
        _id: `other-${i}`,
        task_id: `other-${i}`,
        user: 'other',
        task_name: 'tasks.add',
        args: [],
        kwargs: {},
        queue: 'celery',
        tags: [],
        timestamp: new Date(now - i),
        state: 'SUCCESS',
      })),
    );
    process.stdout.write(
      `Loaded ${ENTRIES} entries of "${USER}" (${UNFINISHED} unfinished) in ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
    );

    const port = await freePort();
    const installed = await installedApi();
    api = spawn(installed.command[0] as string, installed.command.slice(1), {
      env: { ...process.env, ...env, ...installed.env, HTTP_PORT: String(port), HTTP_HOST: '127.0.0.1' },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    const base = `http://127.0.0.1:${port}`;
    const headers = { authorization: `Token ${token}`, accept: 'application/json' };
    for (let attempt = 0; ; attempt++) {
      const ok = await fetch(`${base}/api/health/`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) break;
      if (attempt > 300) throw new Error('the API did not start');
      await new Promise((r) => setTimeout(r, 200));
    }

    const lines: string[] = [];
    /** The count and the page sorted from every match, at once, with the driver (no HTTP). */
    const fullSort = async (filter: Document, page: number): Promise<number> => {
      const times: number[] = [];
      for (let i = 0; i < Math.max(5, Math.ceil(REQUESTS / 2)); i++) {
        const t0 = performance.now();
        await Promise.all([
          log.countDocuments(filter),
          log
            .find(filter)
            .sort({ timestamp: -1, _id: -1 })
            .skip((page - 1) * PAGE_SIZE)
            .limit(PAGE_SIZE)
            .toArray(),
        ]);
        times.push(performance.now() - t0);
      }
      times.sort((a, b) => a - b);
      return times[Math.floor(times.length / 2)]!;
    };
    const phase = async (label: string, query: string, filter: Document, page = 1): Promise<void> => {
      const url = `${base}/api/queue/usertasks/?${query}`;
      const first = (await (await fetch(url, { headers })).json()) as { count?: number };
      const r = await runLoad(REQUESTS, 1, () => ({ method: 'GET', url, headers }));
      const baseline = await fullSort({ user: USER, ...filter }, page);
      const line = `${label.padEnd(44)} count ${String(first.count).padStart(6)}  p50 ${r.p50ms.toFixed(1).padStart(7)} ms  p95 ${r.p95ms.toFixed(1).padStart(7)} ms  (${r.requests} requests, ${r.errors} errors)  driver, full sort: p50 ${baseline.toFixed(1).padStart(6)} ms, ratio ${(r.p50ms / baseline).toFixed(2)}`;
      lines.push(line);
      process.stdout.write(`${line}\n`);
    };
    await phase('status=FAILURE, page 1', `status=FAILURE&page_size=${PAGE_SIZE}`, { state: 'FAILURE' });
    await phase('status=FAILURE, page 500', `status=FAILURE&page_size=${PAGE_SIZE}&page=500`, { state: 'FAILURE' }, 500);
    await phase('status=REVOKED, page 1', `status=REVOKED&page_size=${PAGE_SIZE}`, { state: 'REVOKED' });
    await phase('status=STARTED, page 1', `status=STARTED&page_size=${PAGE_SIZE}`, { state: 'STARTED' });
    await phase('status=PENDING, page 1', `status=PENDING&page_size=${PAGE_SIZE}`, { state: 'PENDING' });
    await phase('status=SUCCESS, page 1', `status=SUCCESS&page_size=${PAGE_SIZE}`, { state: 'SUCCESS' });
    await phase('status=FAILURE&taskname=tasks.noop, page 1', `status=FAILURE&taskname=tasks.noop&page_size=${PAGE_SIZE}`, {
      state: 'FAILURE',
      task_name: { $in: ['tasks.noop'] },
    });
    await phase('no filter, page 1 (for reference)', `page_size=${PAGE_SIZE}`, {});

    // What the status filter did before: every id of the history, then every id's state.
    const before: number[] = [];
    for (let run = 0; run < 3; run++) {
      const t0 = performance.now();
      const ids = (
        await log
          .find({ user: USER }, { projection: { _id: 1 } })
          .sort({ timestamp: -1, _id: -1 })
          .toArray()
      ).map((r) => r._id);
      let failures = 0;
      for (let i = 0; i < ids.length; i += 1000) {
        const rows = await results.find({ _id: { $in: ids.slice(i, i + 1000) } }, { projection: { status: 1 } }).toArray();
        failures += rows.filter((row) => row.status === 'FAILURE').length;
      }
      before.push(performance.now() - t0);
      if (run === 0) process.stdout.write(`(before: ${ids.length} ids read, ${failures} failures found)\n`);
    }
    before.sort((a, b) => a - b);
    const line = `${'before: all ids + states in memory'.padEnd(44)} p50 ${before[1]!.toFixed(0)} ms over 3 runs (the driver alone, no HTTP)`;
    lines.push(line);
    process.stdout.write(
      `\nSummary (${ENTRIES} entries, ${UNFINISHED} unfinished, page size ${PAGE_SIZE}, concurrency 1):\n${lines.join('\n')}\n`,
    );
  } finally {
    if (api !== undefined && api.exitCode === null) {
      const exited = new Promise((r) => api?.once('exit', r));
      api.kill('SIGTERM');
      await exited;
    }
    await mongo.close();
    await services.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
