/** A small closed-loop HTTP load generator: N workers issue requests back to back. */
import { Agent, request } from 'node:http';
import { Pool, type Dispatcher } from 'undici';

export interface LoadResult {
  requests: number;
  errors: number;
  seconds: number;
  rps: number;
  p50ms: number;
  p95ms: number;
  p99ms: number;
  bytes: number;
}

export interface RequestSpec {
  method: string;
  url: string;
  headers?: Record<string, string>;
  body?: string;
}

function once(agent: Agent, spec: RequestSpec): Promise<{ status: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    const req = request(spec.url, { method: spec.method, headers: spec.headers, agent }, (res) => {
      let bytes = 0;
      res.on('data', (c: Buffer) => (bytes += c.length));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(spec.body);
  });
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i] as number;
}

/**
 * Runs `total` requests with `concurrency` workers; `make(i)` builds the i-th request. With
 * `budgetMs`, no new request starts after that much time (slow databases still give numbers).
 */
export async function runLoad(
  total: number,
  concurrency: number,
  make: (i: number) => RequestSpec,
  okStatus = 200,
  budgetMs = Number.POSITIVE_INFINITY,
): Promise<LoadResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  try {
    return await closedLoop(total, concurrency, budgetMs, okStatus, (i) => once(agent, make(i)));
  } finally {
    agent.destroy();
  }
}

/**
 * The same closed loop as `runLoad`, on an undici connection pool (one keep-alive connection per
 * worker) instead of node:http's client. All requests must go to one origin. A second client to
 * check that the load generator is not what a rate measures (bench:queue, part 1).
 */
export async function runPooledLoad(
  total: number,
  concurrency: number,
  make: (i: number) => RequestSpec,
  okStatus = 200,
  budgetMs = Number.POSITIVE_INFINITY,
): Promise<LoadResult> {
  const origin = new URL(make(0).url).origin;
  const pool = new Pool(origin, { connections: concurrency, pipelining: 1 });
  const send = async (i: number): Promise<{ status: number; bytes: number }> => {
    const spec = make(i);
    if (!spec.url.startsWith(origin)) throw new Error(`${spec.url} is not on ${origin}`);
    const response = await pool.request({
      method: spec.method as Dispatcher.HttpMethod,
      path: spec.url.slice(origin.length) || '/',
      headers: spec.headers,
      body: spec.body,
    });
    let bytes = 0;
    for await (const chunk of response.body) bytes += (chunk as Buffer).length;
    return { status: response.statusCode, bytes };
  };
  try {
    return await closedLoop(total, concurrency, budgetMs, okStatus, send);
  } finally {
    await pool.close();
  }
}

/** `concurrency` workers each sending the next request as soon as their last one is answered. */
async function closedLoop(
  total: number,
  concurrency: number,
  budgetMs: number,
  okStatus: number,
  send: (i: number) => Promise<{ status: number; bytes: number }>,
): Promise<LoadResult> {
  const latencies: number[] = [];
  let next = 0;
  let errors = 0;
  let bytes = 0;
  const started = process.hrtime.bigint();
  const deadline = Date.now() + budgetMs;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total && Date.now() < deadline) {
        const i = next++;
        const t0 = process.hrtime.bigint();
        try {
          const r = await send(i);
          bytes += r.bytes;
          if (r.status !== okStatus) errors++;
        } catch {
          errors++;
        }
        latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  latencies.sort((a, b) => a - b);
  return {
    requests: latencies.length,
    errors,
    seconds,
    rps: latencies.length / seconds,
    p50ms: percentile(latencies, 50),
    p95ms: percentile(latencies, 95),
    p99ms: percentile(latencies, 99),
    bytes,
  };
}
