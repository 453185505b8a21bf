/**
 * What one user's heavy aggregations cost everyone else. Prints numbers and ratios; asserts nothing.
 * For each setting of the heavy-query limiter (off, then the defaults) a fresh API process:
 *   baseline — user "light" GETs a page of 10 (indexed filter, with its count) back to back;
 *   loaded   — the same while user "heavy" keeps --parallel aggregations running, each a $group
 *              by _id + $sort over every record. Refused ones (429) are retried after 0.5 s, as
 *              an impatient script would; the limiter still answers those without the database.
 * The light user's p50/p95 under load are compared with the baseline of the same process.
 * Usage: npm run bench:heavy [-- --records 200000 --seconds 20 --parallel 6]
 */
import { parseArgs } from 'node:util';
import { startLocalServices } from '../src/local-services/services.js';
import { connectMongo } from '../src/db/mongo-client.js';
import { loadSettings } from '../src/config/settings.js';
import { createLogger } from '../src/log/logger.js';
import { createServiceContext } from '../src/app/service-context.js';
import { freePort } from '../src/local-services/ports.js';
import { runLoad, type LoadResult } from './load.js';
import { startChild, stop, benchServiceEnv, installedApi } from './processes.js';

const { values: args } = parseArgs({
  options: {
    records: { type: 'string', default: '200000' },
    seconds: { type: 'string', default: '20' },
    parallel: { type: 'string', default: '6' },
  },
});
const RECORDS = Number(args.records);
const SECONDS = Number(args.seconds);
const PARALLEL = Number(args.parallel);
const SITES = 50;
const DB = 'bench_heavy';
const COL = 'records';
const PASSWORD = 'bench-password-1';

const q = (v: unknown): string => encodeURIComponent(JSON.stringify(v));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface HeavyOutcome {
  statuses: Map<number, number>;
  /** Latencies (ms) of the answered aggregations (200 or 503), not of the refusals. */
  answeredMs: number[];
}

/** `workers` loops, each firing the heavy aggregation back to back until `until`. */
async function heavyLoad(url: string, token: string, workers: number, until: () => boolean): Promise<HeavyOutcome> {
  const outcome: HeavyOutcome = { statuses: new Map(), answeredMs: [] };
  const pipeline = [{ $group: { _id: '$_id', site: { $first: '$site' }, v: { $sum: '$value' } } }, { $sort: { v: -1, _id: 1 } }];
  const target = `${url}?page_size=10&aggregate=${q(pipeline)}`;
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (!until()) {
        const t0 = performance.now();
        let status: number;
        try {
          const res = await fetch(target, { headers: { authorization: `Token ${token}`, accept: 'application/json' } });
          await res.arrayBuffer();
          status = res.status;
        } catch {
          status = -1;
        }
        outcome.statuses.set(status, (outcome.statuses.get(status) ?? 0) + 1);
        if (status === 429) await sleep(500);
        else outcome.answeredMs.push(performance.now() - t0);
      }
    }),
  );
  return outcome;
}

function latencies(r: LoadResult): string {
  return `p50 ${r.p50ms.toFixed(1).padStart(7)} ms  p95 ${r.p95ms.toFixed(1).padStart(7)} ms  n ${String(r.requests).padStart(5)}  errors ${r.errors}`;
}

function heavySummary(h: HeavyOutcome): string {
  const statuses = [...h.statuses.entries()]
    .sort(([a], [b]) => a - b)
    .map(([s, n]) => `${s}×${n}`)
    .join(' ');
  const sorted = [...h.answeredMs].sort((a, b) => a - b);
  const median = sorted.length === 0 ? 0 : (sorted[Math.floor(sorted.length / 2)] as number);
  return `heavy user's aggregations: ${statuses}; answered ones took p50 ${(median / 1000).toFixed(1)} s`;
}

async function main(): Promise<void> {
  process.stdout.write('Starting services (state in .state/bench)...\n');
  const services = await startLocalServices({ stateDir: '.state/bench', reuseCertificates: true });
  const env = benchServiceEnv(services.env(), 'bench_heavy_service');
  const settings = loadSettings(env);
  const client = await connectMongo(settings.mongo);
  try {
    const collection = client.db(DB).collection(COL);
    await client.db(DB).dropDatabase();
    process.stdout.write(`Loading ${RECORDS} records...\n`);
    const t0 = Date.now();
    for (let i = 0; i < RECORDS; i += 10_000) {
      const batch = Array.from({ length: Math.min(10_000, RECORDS - i) }, (_, k) => ({
        n: i + k,
        site: `site-${(i + k) % SITES}`,
        value: Math.sin(i + k),
        note: `record ${i + k}`.padEnd(100, '.'),
      }));
      await collection.insertMany(batch, { ordered: false });
    }
    await collection.createIndex({ site: 1 });
    process.stdout.write(`Loaded in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);

    const ctx = await createServiceContext(settings, createLogger('warn'));
    const tokens: Record<string, string> = {};
    for (const username of ['light', 'heavy']) {
      await ctx.auth.users.createUser({ username, password: PASSWORD, isSuperuser: true, isStaff: false }).catch(() => undefined);
      tokens[username] = await ctx.auth.users.tokenFor(username);
    }
    await ctx.close();

    const installed = await installedApi();
    const results: string[] = [];
    const variants: { name: string; env: Record<string, string> }[] = [
      { name: 'limiter off', env: { HEAVY_QUERIES_PER_USER: '1000', HEAVY_QUERIES_TOTAL: '1000' } },
      { name: 'limiter on (defaults: 2 per user, 4 in all)', env: {} },
    ];
    for (const variant of variants) {
      const port = await freePort();
      const api = await startChild(
        installed.command,
        { ...env, ...installed.env, ...variant.env, HTTP_PORT: String(port), HTTP_HOST: '127.0.0.1', LOG_LEVEL: 'info' },
        /API server listening/,
      );
      const url = `http://127.0.0.1:${port}/api/data_store/data/${DB}/${COL}/`;
      const light = (i: number) => ({
        method: 'GET',
        url: `${url}?page_size=10&query=${q({ filter: { site: `site-${i % SITES}` } })}`,
        headers: { authorization: `Token ${tokens.light}`, accept: 'application/json' },
      });
      await runLoad(200, 1, light, 200, 5_000); // warm-up
      const baseline = await runLoad(Number.MAX_SAFE_INTEGER, 1, light, 200, SECONDS * 1000);
      let stopHeavy = false;
      const heavy = heavyLoad(url, tokens.heavy as string, PARALLEL, () => stopHeavy);
      await sleep(2_000); // let the aggregations get going
      const loaded = await runLoad(Number.MAX_SAFE_INTEGER, 1, light, 200, SECONDS * 1000);
      stopHeavy = true;
      const h = await heavy;
      results.push(`${variant.name}:`);
      results.push(`  light user, baseline       ${latencies(baseline)}`);
      results.push(
        `  light user, under load     ${latencies(loaded)}  | ratio p50 ${(loaded.p50ms / baseline.p50ms).toFixed(1)}, p95 ${(loaded.p95ms / baseline.p95ms).toFixed(1)}`,
      );
      results.push(`  ${heavySummary(h)}`);
      await stop(api.child);
    }

    process.stdout.write(
      `\nHeavy-query benchmark: ${RECORDS} records, ${PARALLEL} parallel aggregations by one user, ${SECONDS} s per measurement, ${services.mongo.kind} over TLS\n`,
    );
    for (const line of results) process.stdout.write(`${line}\n`);
  } finally {
    await client.close();
    await services.stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
