/**
 * Expensive reads through the real HTTP server and engine: every kind of collection read ends at
 * the query time limit with a clean 503 `query_timeout` (the count, the first batch and every
 * later batch of a listing share one budget), and one caller's heavy reads are capped so others
 * keep being served.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApp, type CallResult, type TestApp } from '../../support/app.js';
import { until } from '../../support/until.js';

const LIMIT_MS = 400;
/** Stop time allowed above the limit: the client-side backstop's grace plus a loaded CI machine. */
const SLACK_MS = 1_600;
/** 200k small records: enough that a full listing needs several seconds of engine work. */
const RECORDS = 200_000;

let app: TestApp;
let ownerToken: string;
let otherToken: string;
let db: string;
const BASE = '/api/data_store/data';
const q = (v: unknown) => encodeURIComponent(JSON.stringify(v));
const path = (params: string) => `${BASE}/${db}/records/?${params}`;

/** An expression the engine evaluates per record and that never matches: seconds over 200k records. */
const SLOW_FALSE = {
  $eq: [{ $reduce: { input: { $range: [0, 30] }, initialValue: '$n', in: { $add: ['$$value', '$$this'] } } }, -1],
};
const slowFilter = { $expr: SLOW_FALSE };
const slowPipeline = [{ $match: { $expr: SLOW_FALSE } }, { $group: { _id: '$s', c: { $sum: 1 } } }, { $sort: { c: -1 } }];

async function timed(token: string, params: string, signal?: AbortSignal): Promise<CallResult & { ms: number }> {
  const t0 = performance.now();
  const headers: Record<string, string> = { accept: 'application/json', authorization: `Token ${token}` };
  const response = await fetch(new URL(path(params), app.url), { headers, signal });
  const text = await response.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json, ms: performance.now() - t0 };
}

function expectTimeout(r: CallResult & { ms: number }): void {
  expect(r.status, r.text.slice(0, 300)).toBe(503);
  expect(r.json.error).toMatchObject({ status: 503, code: 'query_timeout' });
  expect(r.ms).toBeLessThan(LIMIT_MS + SLACK_MS);
}

beforeAll(async () => {
  app = await startTestApp({ MONGO_QUERY_TIME_LIMIT_MS: String(LIMIT_MS), HEAVY_QUERIES_PER_USER: '2', HEAVY_QUERIES_TOTAL: '6' });
  await app.users.createUser({ username: 'owner', password: 'correct horse battery', isSuperuser: true, isStaff: true });
  await app.users.createUser({ username: 'other', password: 'correct horse battery', isSuperuser: true, isStaff: true });
  ownerToken = await app.users.tokenFor('owner');
  otherToken = await app.users.tokenFor('other');
  db = `${app.prefix}limits`;
  expect((await call(app.url, 'POST', `${BASE}/`, { token: ownerToken, body: { database: db } })).status).toBe(201);
  const collection = app.ctx.mongo.db(db).collection('records');
  for (let i = 0; i < RECORDS; i += 20_000) {
    await collection.insertMany(Array.from({ length: 20_000 }, (_, k) => ({ n: i + k, s: `site-${(i + k) % 97}` })));
  }
  // The reads meant to be quick use these, so they stay quick on a machine busy with the slow ones.
  await collection.createIndex({ n: 1 });
  await collection.createIndex({ s: 1 });
});

afterAll(async () => {
  if (db !== undefined) await app?.ctx.mongo.db(db).dropDatabase();
  await app?.close();
});

describe('the query time limit', () => {
  it('stops a slow filtered listing (find and count) near the limit', async () => {
    expectTimeout(await timed(ownerToken, `query=${q({ filter: slowFilter })}`));
  });

  it('stops a slow count even when the page itself is found at once', async () => {
    // The first records match, so the page is ready immediately; only the count scans everything.
    const filter = { $expr: { $or: [{ $lt: ['$n', 5] }, SLOW_FALSE] } };
    expectTimeout(await timed(ownerToken, `page_size=1&query=${q({ filter })}`));
  });

  it('stops a slow distinct', async () => {
    expectTimeout(await timed(ownerToken, `distinct=s&query=${q({ filter: slowFilter })}`));
  });

  it('stops a slow aggregation', async () => {
    expectTimeout(await timed(ownerToken, `aggregate=${q(slowPipeline)}`));
  });

  it('stops a listing whose later batches outlast the limit: a clean 503 if nothing was sent yet, else a cut-off transfer', async () => {
    // The count and the first batch are quick; the engine spends seconds on the following batches.
    // Those are of a few MiB at most (bounded for the API's memory), so the listing may well have
    // started when the limit is reached: it is then cut off, never completed.
    const t0 = performance.now();
    const response = await fetch(new URL(path('page_size=0'), app.url), {
      headers: { accept: 'application/json', authorization: `Token ${ownerToken}` },
    });
    if (response.status === 503) {
      expect((JSON.parse(await response.text()) as { error: unknown }).error).toMatchObject({ status: 503, code: 'query_timeout' });
    } else {
      expect(response.status).toBe(200);
      await expect(response.text()).rejects.toThrow();
    }
    expect(performance.now() - t0).toBeLessThan(LIMIT_MS + SLACK_MS);
  });

  it('still serves fast reads, pages larger than one default batch included', async () => {
    const page = await timed(ownerToken, `page_size=500&query=${q({ filter: { s: 'site-3' } })}`);
    expect(page.status).toBe(200);
    expect(page.json.results).toHaveLength(500);
    const agg = await timed(ownerToken, `aggregate=${q([{ $match: { n: { $lt: 10 } } }, { $group: { _id: null, c: { $sum: 1 } } }])}`);
    expect(agg.status).toBe(200);
    expect(agg.json.results).toEqual([{ _id: null, c: 10 }]);
  });
});

describe('concurrent heavy reads per caller', () => {
  const heavyAggregate = `aggregate=${q(slowPipeline)}`;
  const quickAggregate = `aggregate=${q([{ $match: { n: 1 } }])}`;

  it('refuses a caller beyond 2 concurrent heavy reads with 429 and Retry-After, not another caller', async () => {
    const mine = Array.from({ length: 5 }, () => timed(ownerToken, heavyAggregate));
    const theirs = timed(otherToken, heavyAggregate);
    const results = await Promise.all(mine);
    const refused = results.filter((r) => r.status === 429);
    expect(results.length - refused.length).toBeLessThanOrEqual(2);
    expect(refused.length).toBeGreaterThanOrEqual(3);
    // Refused at once, without touching the engine: answered before the admitted reads, which run
    // until the time limit (a fixed bound in ms would measure the machine's load instead).
    const admittedMs = Math.min(...results.filter((r) => r.status !== 429).map((r) => r.ms));
    for (const r of refused) {
      expect(r.json.error).toMatchObject({ status: 429, code: 'too_many_heavy_queries' });
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(r.ms).toBeLessThan(admittedMs);
    }
    expect((await theirs).status).not.toBe(429);
    // Every slot is free again once the requests have ended.
    const after = await Promise.all([timed(ownerToken, quickAggregate), timed(ownerToken, quickAggregate)]);
    expect(after.map((r) => r.status)).toEqual([200, 200]);
  });

  it('counts distinct and scanning filters as heavy, plain filtered pages not', async () => {
    const running = [timed(ownerToken, heavyAggregate), timed(ownerToken, heavyAggregate)];
    // Both hold their slots (on a loaded machine they may take longer than a fixed pause to start).
    await until(async () => app.ctx.documents.dataStore.heavyQueries.inUse() === 2, 10_000, 'two heavy reads running', 5);
    expect((await timed(ownerToken, `distinct=s`)).status).toBe(429);
    expect((await timed(ownerToken, `page_size=1&query=${q({ filter: { s: { $regex: '^site-1' } } })}`)).status).toBe(429);
    expect((await timed(ownerToken, `page_size=1&query=${q({ filter: slowFilter })}`)).status).toBe(429);
    expect((await timed(ownerToken, `page_size=5&query=${q({ filter: { s: 'site-1' } })}`)).status).toBe(200);
    await Promise.all(running);
  });

  it('frees the slots of requests whose client went away', async () => {
    const controllers = [new AbortController(), new AbortController()];
    const gone = controllers.map((c) => timed(ownerToken, heavyAggregate, c.signal).catch(() => undefined));
    await new Promise((r) => setTimeout(r, 100));
    for (const c of controllers) c.abort();
    await Promise.all(gone);
    // The engine work of the abandoned reads ends at the time limit; their slots with it.
    await new Promise((r) => setTimeout(r, LIMIT_MS + SLACK_MS));
    const after = await Promise.all([timed(ownerToken, quickAggregate), timed(ownerToken, quickAggregate)]);
    expect(after.map((r) => r.status)).toEqual([200, 200]);
  });
});
