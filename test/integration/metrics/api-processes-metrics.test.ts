/**
 * `serve` with API_PROCESSES=2 and metrics on: whichever process a scrape reaches, it answers
 * with the requests counted by both, and the shared state (database and broker up) once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXPOSITION_REUSE_MS } from '../../../src/metrics/index.js';
import { requestOnNewConnection, spawnServe, type ServeProcess } from '../../support/serve-process.js';

const REQUESTS = 40;
const SCRAPES = 12;

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
      const answers = await Promise.all([0, 1, 2, 3].map(() => requestOnNewConnection(`${baseUrl}/api/health/`)));
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
    }

    const healthCounts: number[] = [];
    const allCounts: number[] = [];
    for (let i = 0; i < SCRAPES; i++) {
      // Scrapes within EXPOSITION_REUSE_MS share one computation: these are spaced so each is fresh.
      if (i > 0) await new Promise((r) => setTimeout(r, EXPOSITION_REUSE_MS + 200));
      const { status, text: body } = await requestOnNewConnection(`${baseUrl}/api/metrics`, { headers: { accept: 'text/plain' } });
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
