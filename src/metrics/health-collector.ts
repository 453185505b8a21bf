/**
 * Database and broker health, measured when scraped: up (1/0) and the round trip of one ping
 * (MongoDB `ping`; for the broker, a passive check of a built-in exchange, one AMQP round trip).
 * A part that does not answer within the scrape timeout counts as down.
 */
import type { Db } from 'mongodb';
import { Gauge, type Registry } from 'prom-client';
import type { BrokerSession } from '../queue/connection/broker-session.js';
import { METRIC_PREFIX, PROCESS_WIDE } from './registry.js';
import { withTimeout, type ScrapeChannel } from '../queue/observe/scrape-channel.js';
import { SharedProbe } from './shared-probe.js';

export interface Ping {
  up: boolean;
  seconds: number | null;
}

/** Times `ping`; never rejects. */
export async function timePing(ping: () => Promise<unknown>): Promise<Ping> {
  const start = performance.now();
  try {
    await withTimeout(ping());
    return { up: true, seconds: (performance.now() - start) / 1000 };
  } catch {
    return { up: false, seconds: null };
  }
}

/** Always present on RabbitMQ, so checking it costs one round trip and never fails by itself. */
const BUILTIN_EXCHANGE = 'amq.topic';

export interface HealthSources {
  db: Db;
  /** Absent when no broker is configured: its metrics are then left out. */
  broker?: { session: BrokerSession; channel: ScrapeChannel };
}

export function registerHealthMetrics(registry: Registry, sources: HealthSources): void {
  const probe = new SharedProbe(async () => {
    const [database, broker] = await Promise.all([
      timePing(() => sources.db.command({ ping: 1 })),
      sources.broker === undefined
        ? Promise.resolve(null)
        : timePing(async () => (await sources.broker!.channel.get()).checkExchange(BUILTIN_EXCHANGE)),
    ]);
    return { database, broker };
  });
  const parts = sources.broker === undefined ? (['database'] as const) : (['database', 'broker'] as const);
  for (const part of parts) {
    new Gauge({
      name: `${METRIC_PREFIX}${part}_up`,
      help: `Whether the ${part} answered a ping within the scrape timeout (1) or not (0)`,
      registers: [registry],
      aggregator: PROCESS_WIDE,
      async collect() {
        const result = (await probe.run())[part];
        this.set(result?.up ? 1 : 0);
      },
    });
    new Gauge({
      name: `${METRIC_PREFIX}${part}_ping_seconds`,
      help: `Round trip of one ping to the ${part} (0 while it is down)`,
      registers: [registry],
      aggregator: PROCESS_WIDE,
      async collect() {
        this.set((await probe.run())[part]?.seconds ?? 0);
      },
    });
  }
}
