/**
 * A remote-control broadcast whose reply queue goes away before the replies are in (the broker
 * node it lived on died, or the connection dropped) is no answer: it fails as "broker
 * unavailable" instead of reporting the replies it happened to get, or none. Otherwise the task
 * list built from it would say that live workers offer nothing, and submissions would be
 * refused as 404/400 during a broker failover.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { brokerEnvSchema, toBrokerSettings } from '../../../src/config/connections.js';
import { BrokerSession } from '../../../src/queue/connection/broker-session.js';
import { ControlClient } from '../../../src/queue/remote-control/control-client.js';
import type { Worker } from '../../../src/worker/worker.js';
import { serviceDatabaseName } from '../../support/app.js';
import { testServices } from '../../support/services.js';
import { TcpProxy, withPort } from '../../support/tcp-proxy.js';
import { until } from '../../support/until.js';
import { startWorker } from './support.js';

let proxy: TcpProxy;
let session: BrokerSession;
let client: ControlClient;
let worker: Worker;
let nodeName: string;

beforeAll(async () => {
  const services = testServices();
  proxy = await new TcpProxy(services.broker.port).start();
  const settings = toBrokerSettings(brokerEnvSchema.parse(services.env));
  session = new BrokerSession({ settings: { ...settings, url: withPort(settings.url, proxy.port) }, initialDelayMs: 200 }).start();
  client = new ControlClient({ session });
  ({ worker, nodeName } = await startWorker(serviceDatabaseName()));
});

afterAll(async () => {
  await worker?.close();
  await client?.close();
  await session?.close();
  await proxy?.close();
});

describe('remote control when the reply queue is lost', () => {
  it('fails the broadcast as broker_unavailable instead of answering with the replies it got', async () => {
    await session.waitUntilConnected(20_000);
    // The worker answers at all (its mailbox is ready).
    await until(
      async () => ((await client.ping({ timeoutMs: 500 }))[nodeName] !== undefined ? true : undefined),
      20_000,
      'the worker to answer a ping',
    );

    // Gathers for 4 s; the worker has answered long before the connection is cut.
    const pending = client.ping({ timeoutMs: 4_000 });
    await new Promise((resolve) => setTimeout(resolve, 500));
    proxy.cut(1_000);
    await expect(pending).rejects.toMatchObject({ name: 'QueueUnavailableError', code: 'broker_unavailable' });

    // Once reconnected, broadcasts answer again.
    const replies = await until(
      async () => {
        const r = await client.ping({ timeoutMs: 500 }).catch(() => undefined);
        return r?.[nodeName] !== undefined ? r : undefined;
      },
      30_000,
      'a ping answered after the reconnect',
    );
    expect(replies[nodeName]).toEqual({ ok: 'pong' });
  });
});
