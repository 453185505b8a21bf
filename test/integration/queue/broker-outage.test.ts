/**
 * A broker outage seen by the API: the broker connection goes through a relay the test cuts.
 * While it is down, submissions get 503 and nothing is logged; history still reads; after it
 * comes back, submissions succeed without restarting the API.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApp, type TestApp } from '../../support/app.js';
import { TcpProxy, withPort } from '../../support/tcp-proxy.js';
import { testServices } from '../../support/services.js';
import type { Worker } from '../../../src/worker/worker.js';
import { until } from '../../support/until.js';
import { startWorker } from './support.js';

let app: TestApp;
let proxy: TcpProxy;
let worker: Worker;
let queue: string;
let token: string;

beforeAll(async () => {
  const services = testServices();
  proxy = await new TcpProxy(services.broker.port).start();
  app = await startTestApp({ BROKER_URL: withPort(services.env.BROKER_URL as string, proxy.port), TASK_LIST_CACHE_S: '0' });
  ({ worker, queue } = await startWorker(app.ctx.settings.serviceDatabase));
  await app.users.createUser({ username: 'runner', password: 'pw-runner-123', permissions: ['cybercom_queue.task.tasks.add'] });
  token = await app.users.tokenFor('runner');
});

afterAll(async () => {
  await worker?.close();
  await app?.close();
  await proxy?.close();
});

const submit = () =>
  call(app.url, 'POST', '/api/queue/run/tasks.add/?wait=10', { token, body: { function: 'tasks.add', queue, args: [1, 2] } });

describe('broker outage', () => {
  it('answers 503 while the broker is unreachable, keeps history readable, and recovers by itself', async () => {
    const first = await until(
      async () => {
        const r = await submit();
        return r.status === 200 ? r : undefined;
      },
      20_000,
      'a first successful submission',
    );
    expect(first.json.result).toBe(3);
    const before = (await call(app.url, 'GET', '/api/queue/usertasks/', { token })).json.count;

    proxy.cut(6_000);
    const during = await submit();
    expect(during.status).toBe(503);
    expect(during.json.error.code).toMatch(/^broker_/);
    const health = await call(app.url, 'GET', '/api/health/', { token });
    expect(health.status).toBe(503);
    expect(health.json.checks.broker).toBe('unavailable');
    const history = await call(app.url, 'GET', '/api/queue/usertasks/', { token });
    expect(history.status).toBe(200);
    expect(history.json.count).toBe(before);

    const after = await until(
      async () => {
        const r = await submit();
        return r.status === 200 ? r : undefined;
      },
      30_000,
      'submissions to work again',
    );
    expect(after.json).toMatchObject({ status: 'SUCCESS', result: 3 });
    expect((await call(app.url, 'GET', '/api/queue/usertasks/', { token })).json.count).toBe(before + 1);
  });
});
