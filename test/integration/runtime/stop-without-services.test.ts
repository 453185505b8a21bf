/**
 * A process whose broker or database is gone still stops promptly on SIGTERM: the API answers
 * the request in flight, then the process exits 0, within seconds rather than after the
 * clients' heartbeats or reconnect loops give up. The services sit behind a relay the test
 * breaks in one of two ways: `cut` drops every connection and refuses new ones (what a stopped
 * or killed RabbitMQ or database looks like on this host), `freeze` keeps the connections open
 * and passes nothing (a paused node, a host that vanished, a partition: nobody closes anything).
 */
import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { spawnServe, type ServeProcess } from '../../support/serve-process.js';
import { TcpProxy, withPort } from '../../support/tcp-proxy.js';
import { testServices } from '../../support/services.js';
import { until } from '../../support/until.js';
import { spawnWorker, TASK_MODULE, unique, type WorkerProcess } from '../worker/support.js';

/**
 * What "promptly" means: well inside a supervisor's patience, far from the broker heartbeat's
 * minute. The API lets requests in flight run for up to 10 s; on a frozen database one takes
 * the driver's detection of the dead server (some 9 s) before its 503. Once the last answer is
 * out, closing the clients takes at most a few seconds: with the database gone, the driver may
 * spend one server selection (5 s) trying to end its sessions before it gives up.
 */
const STOP_LIMIT_MS = 15_000;
const CLOSE_LIMIT_MS = 8_000;
const OUTAGE_MS = 10 * 60_000;

type Service = 'broker' | 'database';
type Outage = 'cut' | 'freeze';

let serve: ServeProcess | undefined;
let worker: WorkerProcess | undefined;
let proxy: TcpProxy | undefined;

afterEach(async () => {
  await serve?.kill();
  worker?.kill();
  await worker?.exited;
  await proxy?.close();
  serve = undefined;
  worker = undefined;
  proxy = undefined;
});

async function relayTo(service: Service): Promise<{ relay: TcpProxy; env: Record<string, string> }> {
  const services = testServices();
  const relay = await new TcpProxy(service === 'broker' ? services.broker.port : services.mongo.port).start();
  proxy = relay;
  const through = service === 'broker' ? 'BROKER_URL' : 'MONGO_URI';
  return { relay, env: { [through]: withPort(services.env[through] as string, relay.port) } };
}

function breakRelay(relay: TcpProxy, outage: Outage): void {
  if (outage === 'cut') relay.cut(OUTAGE_MS);
  else relay.freeze();
}

/**
 * A login whose headers have reached the API and whose body has not: a request the server has
 * in hand, not an idle connection it may drop. `finish` sends the rest; the promise is the answer.
 */
function requestInFlight(url: string): { finish(): void; answer: Promise<{ status: number; text: string }> } {
  const body = JSON.stringify({ username: 'nobody', password: 'not-a-password' });
  const half = Math.floor(body.length / 2);
  let finish = (): void => undefined;
  const answer = new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = request(
      `${url}/api/token/`,
      {
        method: 'POST',
        agent: false,
        headers: { 'content-type': 'application/json', accept: 'application/json', 'content-length': String(Buffer.byteLength(body)) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.setTimeout(60_000, () => req.destroy(new Error('no answer within 60 s')));
    req.write(body.slice(0, half));
    finish = () => req.end(body.slice(half));
  });
  return { finish: () => finish(), answer };
}

/** SIGTERM, then how long until the process exited and with which code. */
async function stopTimed(stop: () => void, exited: Promise<unknown>): Promise<{ code: unknown; ms: number }> {
  const started = Date.now();
  stop();
  const code = await exited;
  return { code, ms: Date.now() - started };
}

const cases: Array<{ service: Service; outage: Outage }> = [
  { service: 'broker', outage: 'cut' },
  { service: 'broker', outage: 'freeze' },
  { service: 'database', outage: 'cut' },
  { service: 'database', outage: 'freeze' },
];

describe('the API on SIGTERM with a service gone', () => {
  it.each(cases)(
    'stops promptly with the $service $outage, after answering the request in flight',
    async ({ service, outage }) => {
      const { relay, env } = await relayTo(service);
      // Metrics on: their broker channel is one more thing a stop must not wait for.
      const running = await spawnServe({ API_PROCESSES: '1', METRICS_ENABLED: 'true', ...env });
      serve = running;
      const url = await running.listening();
      await until(
        () => running.lines().some((l) => l.msg === 'broker connected'),
        30_000,
        () => `the broker connection; ${running.output()}`,
      );

      breakRelay(relay, outage);
      const inFlight = requestInFlight(url);
      // Long enough for the headers to be read on a loaded machine.
      await new Promise((r) => setTimeout(r, 1_000));
      const exited = new Promise<number | null>((resolve) => running.child.once('exit', (code) => resolve(code)));
      const stopped = stopTimed(() => running.child.kill('SIGTERM'), exited);
      await new Promise((r) => setTimeout(r, 200));
      inFlight.finish();
      const answer = await inFlight.answer;
      const answeredAt = Date.now();
      // Refused (no such user) or unavailable (no database): an answer with the JSON error body.
      expect([401, 503], answer.text).toContain(answer.status);
      expect(JSON.parse(answer.text)).toHaveProperty('error');
      const { code, ms } = await stopped;
      expect(code, running.output()).toBe(0);
      expect(ms, running.output()).toBeLessThan(STOP_LIMIT_MS);
      expect(Date.now() - answeredAt, running.output()).toBeLessThan(CLOSE_LIMIT_MS);
    },
    120_000,
  );
});

describe('the TypeScript worker on SIGTERM with the broker gone', () => {
  it.each(['cut', 'freeze'] as const)(
    'stops promptly with the broker %s',
    async (outage) => {
      const { relay, env } = await relayTo('broker');
      const running = spawnWorker({
        ...testServices().env,
        ...env,
        WORKER_NODE_NAME: `${unique('stop')}@test`,
        WORKER_QUEUES: unique('stop-q'),
        WORKER_TASK_MODULES: TASK_MODULE,
      });
      worker = running;
      await running.waitForLog(/worker ready/, 60_000);
      breakRelay(relay, outage);
      await new Promise((r) => setTimeout(r, 500));
      const { code, ms } = await stopTimed(() => running.terminate(), running.exited);
      expect(code, running.output()).toBe(0);
      expect(ms, running.output()).toBeLessThan(STOP_LIMIT_MS);
    },
    120_000,
  );
});
