/**
 * Data-explorer benchmark. Prints numbers and ratios; asserts nothing.
 * For each collection size (--records, default 10,000 and 100,000 records with a GeoJSON point,
 * a date, nested objects and a low-cardinality field), one API process answers, one request at a
 * time (latency, not throughput), and each explorer request is set beside the same reads made
 * straight through the API's JSON, one after another, in the same run:
 *   table     the table view (a page of 25, its count, a $sample of 300 for suggested facets)
 *             vs a page of 25 with its count + an aggregate $sample of 300
 *   facet     the table view with a facet on the low-cardinality field
 *             vs the same + an aggregate $sortByCount / $limit 10
 *   schema    the schema tab (a $sample of 1,000, profiled)
 *             vs an aggregate $sample of 1,000
 *   map data  the map's geometries endpoint (the first EXPLORER_MAP_LIMIT records with a geometry)
 *             vs an aggregate $match on the geometry's type / $limit that many + 1 / $project it
 * (The API's aggregations are read whole, page_size=0: no count of their own, as the explorer's.)
 * The ratio is explorer p50 / API p50 (the goal: the explorer adds at most 20 %).
 * Then, for the largest collection, the table view's first paint in Chromium (warm: the page is
 * loaded --paints times after one unmeasured load), from the browser's own paint timing
 * (`first-contentful-paint`), beside the time to the response's last byte (goal: ≤ 300 ms).
 * And compression: for the table view with a page of 50, the API's JSON page of 50, the whole
 * collection as CSV and the map's geometries, the bytes as sent uncompressed, in Brotli and in
 * gzip (as the service sends them), and the CPU time per MB each encoding costs (measured here,
 * with the service's settings: Brotli quality 4, gzip level 6, or 3 for a streamed answer such as
 * the CSV export).
 * Usage: npm run bench:explorer [-- --records 10000,100000 --requests 30 --paints 10]
 */
import { existsSync } from 'node:fs';
import { request } from 'node:http';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';
import { startLocalServices } from '../src/local-services/services.js';
import { connectMongo } from '../src/db/mongo-client.js';
import { loadSettings } from '../src/config/settings.js';
import { createLogger } from '../src/log/logger.js';
import { createServiceContext } from '../src/app/service-context.js';
import { freePort } from '../src/local-services/ports.js';
import { startChild, stop, benchServiceEnv, installedApi } from './processes.js';
import { ResultsRecorder } from './results.js';

const recorder = new ResultsRecorder('explorer', 'npm run bench:explorer');

const { values: args } = parseArgs({
  options: {
    records: { type: 'string', default: '10000,100000' },
    requests: { type: 'string', default: '30' },
    paints: { type: 'string', default: '10' },
  },
});
const SIZES = String(args.records)
  .split(',')
  .map((n) => Number(n.trim()))
  .filter((n) => Number.isInteger(n) && n > 0);
const REQUESTS = Math.max(3, Number(args.requests));
const PAINTS = Math.max(1, Number(args.paints));
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const DB = 'bench_explorer';
const MAP_LIMIT = 20_000;
const KINDS = ['rain', 'snow', 'hail', 'fog', 'clear'];

function makeRecord(i: number): Record<string, unknown> {
  return {
    n: i,
    kind: KINDS[i % KINDS.length],
    when: new Date(Date.UTC(2024, 0, 1) + i * 60_000),
    loc: { type: 'Point', coordinates: [-100 + (i % 400) / 20, 30 + ((i * 7) % 300) / 20] },
    station: { name: `station ${i % 40}`, code: `S${String(i % 40).padStart(3, '0')}` },
    reading: { temp: Math.round(Math.sin(i / 50) * 300) / 10, depth: (i % 97) / 4 },
    note: `reading number ${i}`,
  };
}

interface Timing {
  p50: number;
  p95: number;
}

function percentiles(ms: number[]): Timing {
  const sorted = [...ms].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))] as number;
  return { p50: at(0.5), p95: at(0.95) };
}

/** GETs `urls` one after another and returns the total time; any status but 200 stops the run. */
async function timeGets(urls: string[], headers: Record<string, string>): Promise<number> {
  const started = performance.now();
  for (const url of urls) {
    const response = await fetch(url, { headers });
    const body = await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`${url} answered ${response.status}: ${Buffer.from(body).toString('utf8').slice(0, 300)}`);
  }
  return performance.now() - started;
}

/** One comparison: a warm-up of each side, then REQUESTS rounds alternating explorer and API. */
async function compare(
  name: string,
  explorer: string[],
  api: string[],
  headers: { html: Record<string, string>; json: Record<string, string> },
): Promise<string> {
  for (let i = 0; i < 3; i++) {
    await timeGets(explorer, headers.html);
    await timeGets(api, headers.json);
  }
  const viaExplorer: number[] = [];
  const viaApi: number[] = [];
  for (let i = 0; i < REQUESTS; i++) {
    viaExplorer.push(await timeGets(explorer, headers.html));
    viaApi.push(await timeGets(api, headers.json));
  }
  const e = percentiles(viaExplorer);
  const a = percentiles(viaApi);
  recorder.add({
    what: `${name}, p50`,
    ours: e.p50,
    unit: 'ms',
    baseline: 'the same reads through the API’s JSON',
    baselineValue: a.p50,
    goal: '≤ 1.2 (time)',
  });
  return [
    `  ${name.padEnd(10)}`,
    `explorer p50 ${e.p50.toFixed(1).padStart(7)} ms p95 ${e.p95.toFixed(1).padStart(7)} ms`,
    `| API JSON (${api.length} request${api.length === 1 ? '' : 's'}) p50 ${a.p50.toFixed(1).padStart(7)} ms p95 ${a.p95.toFixed(1).padStart(7)} ms`,
    `| ratio ${(e.p50 / a.p50).toFixed(2)}`,
  ].join('  ');
}

/**
 * Read in the page: the first contentful paint (waited for when it has not happened yet) and the
 * navigation's response end. Source text, so the runner's compiler adds nothing to it.
 */
const PAINT_TIMING = `new Promise((done) => {
  const navigation = performance.getEntriesByType('navigation')[0];
  const read = (fcp) => done({ fcp, responseEnd: navigation === undefined ? NaN : navigation.responseEnd });
  const known = performance.getEntriesByName('first-contentful-paint')[0];
  if (known !== undefined) return read(known.startTime);
  new PerformanceObserver((list, observer) => {
    const entry = list.getEntriesByName('first-contentful-paint')[0];
    if (entry === undefined) return;
    observer.disconnect();
    read(entry.startTime);
  }).observe({ type: 'paint', buffered: true });
})`;

/** The table view's first contentful paint and response end in Chromium, warm. */
async function firstPaint(url: string, token: string): Promise<string> {
  if (!existsSync(CHROMIUM)) return `  first paint: skipped (${CHROMIUM} is missing; CHROMIUM_PATH names another)`;
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
  });
  try {
    const context = await browser.newContext({
      viewport: { width: 1440, height: 900 },
      extraHTTPHeaders: { authorization: `Token ${token}` },
    });
    const page = await context.newPage();
    const paints: number[] = [];
    const responses: number[] = [];
    for (let i = 0; i <= PAINTS; i++) {
      await page.goto(url, { waitUntil: 'load' });
      const timing = (await page.evaluate(PAINT_TIMING)) as { fcp: number; responseEnd: number };
      // The first load warms the browser's and the server's caches.
      if (i === 0) continue;
      paints.push(timing.fcp);
      responses.push(timing.responseEnd);
    }
    const fcp = percentiles(paints);
    const end = percentiles(responses);
    recorder.add({
      what: 'table view, first contentful paint in Chromium (warm), p50',
      ours: fcp.p50,
      unit: 'ms',
      goal: '≤ 300 ms',
      note: `${PAINTS} loads of ${url.replace(/^https?:\/\/[^/]+/, '')}; response end p50 ${end.p50.toFixed(0)} ms`,
    });
    return (
      `  first paint (table view, Chromium, warm, ${PAINTS} loads): first-contentful-paint p50 ${fcp.p50.toFixed(0)} ms p95 ${fcp.p95.toFixed(0)} ms` +
      ` | response end p50 ${end.p50.toFixed(0)} ms | goal ≤ 300 ms`
    );
  } finally {
    await browser.close();
  }
}

/** A GET's body as it came over the wire (node:http decodes nothing) and its Content-Encoding. */
function rawGet(url: string, headers: Record<string, string>): Promise<{ bytes: number; body: Buffer; encoding: string }> {
  return new Promise((done, fail) => {
    const req = request(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const body = Buffer.concat(chunks);
        if (res.statusCode !== 200) fail(new Error(`${url} answered ${res.statusCode}`));
        else done({ bytes: body.length, body, encoding: String(res.headers['content-encoding'] ?? 'none') });
      });
      res.on('error', fail);
    });
    req.on('error', fail);
    req.end();
  });
}

/** CPU milliseconds (user + system) per MB of input that `compress` costs, over enough rounds to take a second of CPU at most. */
function cpuPerMb(body: Buffer, compress: (input: Buffer) => Buffer): number {
  const rounds = Math.max(1, Math.min(20, Math.round(8_000_000 / Math.max(1, body.length))));
  const before = process.cpuUsage();
  for (let i = 0; i < rounds; i++) compress(body);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000 / rounds / (body.length / 1e6);
}

const BROTLI = (input: Buffer) => brotliCompressSync(input, { params: { [constants.BROTLI_PARAM_QUALITY]: 4 } });
/** gzip as the service sends a whole body (level 6) or a streamed one (level 3). */
const GZIP = (input: Buffer) => gzipSync(input, { level: 6 });
const GZIP_STREAMED = (input: Buffer) => gzipSync(input, { level: 3 });

/** Bytes on the wire without compression, with Brotli and with gzip, and the CPU per MB of each. */
async function compressionLine(
  name: string,
  url: string,
  headers: Record<string, string>,
  goalKb?: number,
  streamed = false,
): Promise<string> {
  const plain = await rawGet(url, headers);
  const br = await rawGet(url, { ...headers, 'accept-encoding': 'br' });
  const gzip = await rawGet(url, { ...headers, 'accept-encoding': 'gzip' });
  if (goalKb !== undefined)
    recorder.add({
      what: `${name}, bytes on the wire with Brotli`,
      ours: br.bytes / 1024,
      unit: 'KB',
      baseline: 'the same answer uncompressed',
      baselineValue: plain.bytes / 1024,
      goal: `≤ ${goalKb} KB`,
    });
  const kb = (n: number) => `${(n / 1024).toFixed(0)} KB`;
  const saved = (n: number) => `${(100 * (1 - n / plain.bytes)).toFixed(0)} % saved`;
  return [
    `  ${name.padEnd(22)}`,
    `${kb(plain.bytes).padStart(9)} plain`,
    `| br ${kb(br.bytes).padStart(7)} (${br.encoding}, ${saved(br.bytes)}) ${cpuPerMb(plain.body, BROTLI).toFixed(1)} ms CPU/MB`,
    `| gzip ${kb(gzip.bytes).padStart(7)} (${gzip.encoding}, ${saved(gzip.bytes)}) ${cpuPerMb(plain.body, streamed ? GZIP_STREAMED : GZIP).toFixed(1)} ms CPU/MB`,
  ].join(' ');
}

async function main(): Promise<void> {
  if (SIZES.length === 0) throw new Error('--records names no collection size (e.g. --records 10000,100000)');
  process.stdout.write('Starting services (state in .state/bench-explorer)...\n');
  const services = await startLocalServices({ stateDir: '.state/bench-explorer', reuseCertificates: true });
  const env = benchServiceEnv(services.env(), 'bench_explorer_service', { EXPLORER_MAP_LIMIT: String(MAP_LIMIT) });
  const settings = loadSettings(env);
  const client = await connectMongo(settings.mongo);
  const results: string[] = [];
  try {
    await client.db(DB).dropDatabase();
    for (const size of SIZES) {
      const collection = client.db(DB).collection(`records_${size}`);
      process.stdout.write(`Loading ${size} records...\n`);
      const t0 = Date.now();
      for (let i = 0; i < size; i += 5000) {
        await collection.insertMany(Array.from({ length: Math.min(5000, size - i) }, (_, k) => makeRecord(i + k)));
      }
      process.stdout.write(`Loaded in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
    }

    const ctx = await createServiceContext(settings, createLogger('warn'));
    await ctx.auth.users.ensureSuperuser({ username: 'bench', email: 'bench@example.org', password: 'bench-password-1' });
    const token = await ctx.auth.users.tokenFor('bench');
    await ctx.close();

    const port = await freePort();
    const installed = await installedApi();
    const api = await startChild(
      installed.command,
      { ...env, ...installed.env, HTTP_PORT: String(port), HTTP_HOST: '127.0.0.1', LOG_LEVEL: 'info' },
      /API server listening/,
    );
    const origin = `http://127.0.0.1:${port}`;
    const headers = {
      html: { authorization: `Token ${token}`, accept: 'text/html' },
      json: { authorization: `Token ${token}`, accept: 'application/json' },
    };
    const json = (value: unknown) => encodeURIComponent(JSON.stringify(value));
    try {
      for (const size of SIZES) {
        const col = `records_${size}`;
        const explore = `${origin}/api/explore/data_store/${DB}/${col}/`;
        const data = `${origin}/api/data_store/data/${DB}/${col}/`;
        const page = `${data}?page_size=25&query=${json({ filter: {} })}`;
        // Aggregations as whole results (page_size=0): no count of their own, as the explorer reads them.
        const aggregate = (pipeline: unknown[]) => `${data}?page_size=0&aggregate=${json(pipeline)}`;
        const sample = (n: number) => aggregate([{ $sample: { size: n } }]);
        results.push(`${size} records:`);
        const at = (tab: string) => `${tab} at ${size} records`;
        results.push(await compare(at('table'), [explore], [page, sample(300)], headers));
        results.push(
          await compare(
            at('facet'),
            [`${explore}?facet=kind`],
            [page, aggregate([{ $sortByCount: '$kind' }, { $limit: 10 }]), sample(300)],
            headers,
          ),
        );
        results.push(await compare(at('schema'), [`${explore}?tab=schema`], [sample(1000)], headers));
        results.push(
          await compare(
            at('map data'),
            [`${origin}/api/explore/geometries/data_store/${DB}/${col}/?geo=loc`],
            [aggregate([{ $match: { loc: { $type: 'object' } } }, { $limit: MAP_LIMIT + 1 }, { $project: { loc: 1 } }])],
            { html: headers.json, json: headers.json },
          ),
        );
      }
      const largest = Math.max(...SIZES);
      results.push(`${largest} records:`);
      results.push(await firstPaint(`${origin}/api/explore/data_store/${DB}/records_${largest}/`, token));
      const explore = `${origin}/api/explore/data_store/${DB}/records_${largest}/`;
      const data = `${origin}/api/data_store/data/${DB}/records_${largest}/`;
      results.push(`  compression (bytes on the wire; CPU per MB of input, measured in this process):`);
      results.push(await compressionLine('table, page of 50', `${explore}?size=50`, headers.html, 15));
      results.push(await compressionLine('API JSON, page of 50', `${data}?page_size=50`, headers.json));
      results.push(await compressionLine(`CSV, ${largest} records`, `${data}?page_size=0&format=csv`, headers.json, undefined, true));
      results.push(
        await compressionLine(
          'map geometries',
          `${origin}/api/explore/geometries/data_store/${DB}/records_${largest}/?geo=loc`,
          headers.json,
          250,
        ),
      );
    } finally {
      await stop(api.child);
    }
    process.stdout.write(
      `\nExplorer benchmark: one request at a time, ${REQUESTS} rounds per line, ${services.mongo.kind} over TLS, map limit ${MAP_LIMIT}\n`,
    );
    for (const line of results) process.stdout.write(`${line}\n`);
    recorder.save();
  } finally {
    await client.db(DB).dropDatabase();
    await client.close();
    await services.stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
