/**
 * The login throttle's counts live in the service database, so the limit holds across API
 * processes: here two throttles (as two processes have) and two whole API instances on one
 * service database.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db, MongoClient } from 'mongodb';
import { connectMongo } from '../../../src/db/mongo-client.js';
import { LOGIN_ATTEMPTS_COLLECTION, LoginThrottle, type LoginAttempt, type ThrottleSettings } from '../../../src/auth/login-throttle.js';
import { call, serviceDatabaseName, startTestApp, testSettings, type TestApp } from '../../support/app.js';
import { closeAndDrop, expectError } from './helpers.js';

/** The Retry-After a 429 would carry for this wait (whole seconds), or null when nothing waits. */
async function retryAfter(wait: Promise<number>): Promise<string | null> {
  const ms = await wait;
  return ms > 0 ? String(Math.max(1, Math.ceil(ms / 1000))) : null;
}

/** Whether a counter delays this attempt (its wrong password would be a 429); the attempt is then ended. */
async function delayed(begun: Promise<LoginAttempt>): Promise<boolean> {
  const attempt = await begun;
  if (attempt.retryAfterMs === 0) return false;
  await attempt.abandoned();
  return true;
}

describe('LoginThrottle on the service database', () => {
  let client: MongoClient;
  let db: Db;
  beforeAll(async () => {
    const settings = testSettings();
    client = await connectMongo(settings.mongo);
    db = client.db(serviceDatabaseName());
  });
  afterAll(async () => {
    await db.dropDatabase().catch(() => undefined);
    await client.close();
  });

  /**
   * Two throttles on one database, as two API processes have, with a clock the test moves. The
   * account limit is `maxFailures` as well, so the account's counters decide unless said otherwise.
   */
  async function pair(maxFailures: number, limits: Partial<ThrottleSettings> = {}) {
    await db.collection(LOGIN_ATTEMPTS_COLLECTION).deleteMany({});
    let now = Date.now();
    const clock = () => now;
    const settings: ThrottleSettings = {
      maxFailures,
      accountMaxFailures: maxFailures,
      addressMaxFailures: 100,
      windowSeconds: 60,
      ...limits,
    };
    const a = new LoginThrottle(db, settings, clock);
    const b = new LoginThrottle(db, settings, clock);
    await a.init();
    await b.init();
    return { a, b, advance: (ms: number) => (now += ms) };
  }

  it('failures counted by one process delay the account in the other, with a Retry-After that grows', async () => {
    const { a, b, advance } = await pair(3);
    for (let i = 0; i < 3; i++) {
      const attempt = await (i % 2 === 0 ? a : b).begin('alice', `10.0.0.${i}`);
      await attempt.failed();
      advance(1_000);
    }
    // newest failure at t0 + 2 s, first wait 2 s, now t0 + 3 s → 1 s left
    expect(await retryAfter(b.delayMs('ALICE', '10.9.9.9'))).toBe('1');
    expect(await delayed(a.begin('alice', '10.9.9.8'))).toBe(true);
    advance(1_001);
    const fourth = await a.begin('alice', '10.9.9.8');
    await fourth.failed();
    // One more failure: twice the wait, from it.
    expect(await retryAfter(b.delayMs('alice', '10.9.9.9'))).toBe('4');
    advance(4_001);
    expect(await retryAfter(a.delayMs('alice', '10.9.9.9'))).toBeNull();
  });

  it('delays a client address across accounts at its own ceiling; a success does not clear it', async () => {
    const { a, b } = await pair(2, { addressMaxFailures: 3 });
    await a.recordFailure('carol', '203.0.113.5');
    await b.recordFailure('dave', '203.0.113.5');
    // Two failures on two accounts: below the address's ceiling, nobody else is delayed.
    expect(await retryAfter(b.delayMs('erin', '203.0.113.5'))).toBeNull();
    await (await a.begin('carol', '203.0.113.5')).succeeded();
    await b.recordFailure('frank', '203.0.113.5');
    expect(await retryAfter(b.delayMs('carol', '203.0.113.6'))).toBeNull();
    expect(await retryAfter(b.delayMs('carol', '203.0.113.5'))).not.toBeNull();
    expect(await delayed(a.begin('erin', '203.0.113.5'))).toBe(true);
  });

  it("counts a password check of one's own account against that account only", async () => {
    const { a, b } = await pair(2, { addressMaxFailures: 2 });
    await a.recordFailure('grace', '198.51.100.9', 'own-account');
    await b.recordFailure('grace', '198.51.100.9', 'own-account');
    expect(await retryAfter(a.delayMs('grace', '198.51.100.9', 'own-account'))).not.toBeNull();
    expect(await delayed(b.begin('grace', '198.51.100.9'))).toBe(true);
    const other = await a.begin('heidi', '198.51.100.9');
    await other.succeeded();
  });

  it('places in flight in either process count before any password is judged; each attempt ends once', async () => {
    const { a, b } = await pair(3);
    const attempts = [await a.begin('bob', '198.51.100.1'), await b.begin('bob', '198.51.100.2'), await a.begin('bob', '198.51.100.3')];
    expect(await delayed(b.begin('bob', '198.51.100.4'))).toBe(true);
    // Ending one frees its place; a second outcome for the same attempt changes nothing.
    await attempts[0]?.abandoned();
    await attempts[0]?.failed();
    const fourth = await b.begin('bob', '198.51.100.4');
    await attempts[1]?.failed();
    await attempts[2]?.failed();
    await fourth.succeeded();
    expect(await delayed(a.begin('bob', '198.51.100.5'))).toBe(false);
  });

  it("a device cookie's logins ignore the other counters until it has failed maxFailures times, in either process", async () => {
    const { a, b } = await pair(2, { addressMaxFailures: 2 });
    for (const name of ['ivan', 'judy']) await a.recordFailure(name, '192.0.2.9');
    // The account and the address delay unknown devices ...
    expect(await delayed(b.begin('ivan', '192.0.2.9'))).toBe(true);
    // ... not the account's known device, until its own failures use up its trust.
    const first = await b.begin('ivan', '192.0.2.9', 'device-1');
    expect(first.knownDevice).toBe(true);
    await first.failed();
    const second = await a.begin('ivan', '192.0.2.9', 'device-1');
    await second.failed();
    expect(await delayed(b.begin('ivan', '192.0.2.9', 'device-1'))).toBe(true);
    // Another device of the account keeps its trust; a success clears only its own failures.
    const other = await a.begin('ivan', '192.0.2.9', 'device-2');
    expect(other.knownDevice).toBe(true);
    await other.succeeded();
    expect(await delayed(b.begin('ivan', '192.0.2.9'))).toBe(true);
  });

  it('of many simultaneous attempts spread over both processes, at most maxFailures are not delayed', async () => {
    const { a, b } = await pair(5);
    // Several rounds, each on a key nobody has used: its document is created by the burst itself.
    for (let round = 0; round < 5; round++) {
      const outcomes = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          (i % 2 === 0 ? a : b)
            .begin(`target-${round}`, `192.0.2.${i}`)
            .then((attempt) => (attempt.retryAfterMs === 0 ? 'place' : 'delayed')),
        ),
      );
      expect(outcomes.filter((o) => o === 'place').length, outcomes.join(',')).toBe(5);
      expect(
        outcomes.every((o) => o === 'place' || o === 'delayed'),
        outcomes.join(','),
      ).toBe(true);
    }
  });
});

describe('two API instances on one service database', () => {
  let first: TestApp;
  let second: TestApp;
  beforeAll(async () => {
    // Behind a trusted proxy, each request from its own address: the delays below are the account's.
    const shared = {
      SERVICE_DATABASE: serviceDatabaseName(),
      LOGIN_MAX_FAILURES: '4',
      LOGIN_ACCOUNT_MAX_FAILURES: '4',
      LOGIN_WINDOW_S: '600',
      TRUST_PROXY: 'true',
    };
    first = await startTestApp(shared);
    second = await startTestApp(shared);
    await first.users.createUser({ username: 'shared-target', password: 'shared-target-pass-1' });
  });
  afterAll(async () => {
    await second?.close();
    await closeAndDrop(first);
  });

  it('hold LOGIN_MAX_FAILURES together: failures through one delay the account through the other', async () => {
    for (let i = 0; i < 4; i++) {
      const app = i % 2 === 0 ? first : second;
      const res = await call(app.url, 'POST', '/api/token/', {
        body: { username: 'shared-target', password: `guess-${i}-xyz` },
        headers: { 'X-Forwarded-For': `198.51.100.${i + 1}` },
      });
      expectError(res, 401, 'invalid_credentials');
    }
    for (const [i, app] of [first, second].entries()) {
      const res = await call(app.url, 'POST', '/api/token/', {
        body: { username: 'shared-target', password: `guess-${10 + i}-xyz` },
        headers: { 'X-Forwarded-For': `198.51.100.${50 + i}` },
      });
      expectError(res, 429, 'throttled');
    }
    // The right password is never what is delayed.
    const right = await call(second.url, 'POST', '/api/token/', {
      body: { username: 'shared-target', password: 'shared-target-pass-1' },
      headers: { 'X-Forwarded-For': '198.51.100.60' },
    });
    expect(right.status, right.text).toBe(200);
  });

  it('answer at most LOGIN_MAX_FAILURES of simultaneous wrong guesses spread over both 401, the rest 429', async () => {
    await first.users.createUser({ username: 'parallel-target', password: 'parallel-target-pass-1' });
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        call((i % 2 === 0 ? first : second).url, 'POST', '/api/token/', {
          body: { username: 'parallel-target', password: `guess-${i}-xyz` },
          headers: { 'X-Forwarded-For': `203.0.113.${i + 1}` },
        }),
      ),
    );
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s === 401).length, statuses.join(',')).toBeLessThanOrEqual(4);
    expect(statuses.filter((s) => s === 429).length, statuses.join(',')).toBeGreaterThanOrEqual(26);
    expect(
      statuses.every((s) => s === 401 || s === 429),
      statuses.join(','),
    ).toBe(true);
  });
});
