/**
 * `serve` with API_PROCESSES=2 and metrics on: whichever process a scrape reaches, it answers
 * with the requests counted by both, and the shared state (database and broker up) once.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServe, type ServeProcess } from '../../support/serve-process.js';

const REQUESTS = 40;
const SCRAPES = 12;

/** One GET on a connection of its own, so the kernel picks the process anew each time. */
function get(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.setTimeout(15_000, () => req.destroy(new Error('no answer within 15 s')));
    req.end();
  });
}

/** The sum of the samples of `name` whose labels contain `labelPart` (all when empty). */
function total(text: string, name: string, labelPart = ''): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    const match = /^([a-z_:]+)(\{[^}]*\})? (\S+)$/.exec(line);
    if (match === null || match[1] !== name || !(match[2] ?? '').includes(labelPart)) continue;
    sum += Number(match[3]);
  }
  return sum;
}

describe('metrics with API_PROCESSES=2', () => {
  let serve: ServeProcess;
  let baseUrl = '';

  beforeAll(async () => {
    serve = await spawnServe({ API_PROCESSES: '2', METRICS_ENABLED: 'true', METRICS_ALLOWED_IPS: '127.0.0.1' });
    baseUrl = await serve.listening();
  });

  afterAll(() => serve?.kill());

  it('answers every scrape with the requests of both processes and the shared state once', async () => {
    // Several at a time, so both processes take some.
    for (let i = 0; i < REQUESTS; i += 4) {
      const answers = await Promise.all([0, 1, 2, 3].map(() => get(`${baseUrl}/api/health/`)));
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
    }

    const healthCounts: number[] = [];
    const allCounts: number[] = [];
    for (let i = 0; i < SCRAPES; i++) {
      const { status, body } = await get(`${baseUrl}/api/metrics`);
      expect(status, body).toBe(200);
      healthCounts.push(total(body, 'cybercom_http_request_duration_seconds_count', 'route="/api/health'));
      allCounts.push(total(body, 'cybercom_http_request_duration_seconds_count'));
      // Measured once, by the process that answered: never the sum of the two.
      expect(total(body, 'cybercom_database_up')).toBe(1);
      expect(total(body, 'cybercom_broker_up')).toBe(1);
      expect(body.match(/^cybercom_database_up /gm)).toHaveLength(1);
      expect(body.match(/^nodejs_version_info\{/gm)).toHaveLength(1);
    }
    // The health requests are all counted by every scrape, whichever process answered it.
    expect(healthCounts, serve.output()).toEqual(Array<number>(SCRAPES).fill(REQUESTS));
    // The scrapes count themselves (after answering): the total only grows, by one each time.
    for (let i = 1; i < SCRAPES; i++) expect(allCounts[i], allCounts.join(',')).toBe(allCounts[i - 1]! + 1);
  }, 180_000);
});
