/**
 * Heartbeats for made-up worker names, sent through the real broker the way a holder of the
 * workers' credentials could: the workers tracked and the metric series stay at
 * WORKERS_TRACKED_MAX, and parallel scrapes share one computation.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { EVENT_EXCHANGE, declareEventExchange } from '../../../src/queue/protocol/entities.js';
import { call, startTestApp, type TestApp } from '../../support/app.js';

const CAP = 50;
const FLOOD = 2_000;

let app: TestApp;
let token: string;

beforeAll(async () => {
  app = await startTestApp({ WORKERS_TRACKED_MAX: String(CAP) });
  await app.users.createUser({ username: 'scraper', password: 'scraper-pass-123', isSuperuser: true });
  token = await app.users.tokenFor('scraper');
  await app.ctx.queue!.session.waitUntilConnected(20_000);
});

afterAll(async () => {
  await app?.close();
});

const workerSeries = (text: string) => text.split('\n').filter((line) => line.startsWith('cybercom_worker_online{')).length;

describe('a flood of fake worker heartbeats', () => {
  it(`keeps ${CAP} workers and ${CAP} series however many names ${FLOOD} heartbeats make up`, async () => {
    const metrics = app.ctx.metrics!;
    // The event listener is subscribed once the API process is connected.
    await vi.waitFor(() => expect((app.ctx.queue!.events as unknown as { channel: unknown }).channel).not.toBeNull(), { timeout: 10_000 });
    const channel = await app.ctx.queue!.session.require().createChannel();
    await declareEventExchange(channel);
    for (let i = 0; i < FLOOD; i++) {
      const event = {
        type: 'worker-heartbeat',
        hostname: `fake-${i}@flood`,
        freq: 60,
        active: 0,
        processed: 0,
        timestamp: Date.now() / 1000,
      };
      channel.publish(EVENT_EXCHANGE, 'worker.heartbeat', Buffer.from(JSON.stringify(event)), { contentType: 'application/json' });
    }
    await channel.close();
    await vi.waitFor(() => expect(metrics.workers.snapshot().some((w) => w.node === `fake-${FLOOD - 1}@flood`)).toBe(true), {
      timeout: 20_000,
    });
    expect(metrics.workers.size).toBe(CAP);
    await new Promise((resolve) => setTimeout(resolve, 1_100)); // past the shared exposition's lifetime
    const scrape = await call(app.url, 'GET', '/api/metrics', { token, accept: 'text/plain' });
    expect(scrape.status).toBe(200);
    expect(workerSeries(scrape.text)).toBe(CAP);
  });

  it('computes the exposition once for 40 parallel scrapes', async () => {
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const computed = vi.spyOn(app.ctx.metrics!.shared, 'metrics');
    const scrapes = await Promise.all(
      Array.from({ length: 40 }, () => call(app.url, 'GET', '/api/metrics', { token, accept: 'text/plain' })),
    );
    expect(scrapes.every((s) => s.status === 200)).toBe(true);
    expect(new Set(scrapes.map((s) => s.text)).size).toBe(1);
    expect(computed).toHaveBeenCalledTimes(1);
    computed.mockRestore();
  });
});
