/**
 * /api/metrics as Prometheus sees it: a real Prometheus server (Debian's package) scrapes a test
 * app with a token of a user holding `metrics_read`, the expected series arrive, and tasks run on
 * a TypeScript worker move the submission and outcome counters. Also who may read the metrics,
 * through HTTP.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApp, type TestApp } from '../../support/app.js';
import type { Worker } from '../../../src/worker/worker.js';
import { until } from '../../support/until.js';
import { startWorker } from '../queue/support.js';

let app: TestApp;
let worker: Worker;
let queue: string;
let nodeName: string;
let rootToken: string;
let scraperToken: string;
let plainToken: string;
let prometheus: ChildProcess | undefined;
let promUrl = '';
let promLog = '';
const tmp = mkdtempSync(join(tmpdir(), 'prometheus-'));

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function startPrometheus(target: string, tokenFile: string): Promise<void> {
  const port = await freePort();
  const config = join(tmp, 'prometheus.yml');
  writeFileSync(
    config,
    [
      'global:',
      '  scrape_interval: 1s',
      '  scrape_timeout: 1s',
      'scrape_configs:',
      '  - job_name: cybercom',
      '    metrics_path: /api/metrics',
      '    authorization:',
      '      type: Token',
      `      credentials_file: ${tokenFile}`,
      '    static_configs:',
      `      - targets: ['${target}']`,
      '',
    ].join('\n'),
  );
  prometheus = spawn(
    'prometheus',
    [`--config.file=${config}`, `--storage.tsdb.path=${join(tmp, 'data')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  prometheus.stderr?.on('data', (chunk: Buffer) => {
    promLog = (promLog + chunk.toString()).slice(-4_000);
  });
  promUrl = `http://127.0.0.1:${port}`;
}

async function promApi(path: string): Promise<any> {
  try {
    const res = await fetch(`${promUrl}${path}`);
    return res.ok ? ((await res.json()) as any).data : undefined;
  } catch {
    return undefined;
  }
}

/** The value of an instant query's only (or first) series, or undefined when there is none. */
async function queryValue(expr: string): Promise<number | undefined> {
  const data = await promApi(`/api/v1/query?query=${encodeURIComponent(expr)}`);
  const first = data?.result?.[0];
  return first === undefined ? undefined : Number(first.value[1]);
}

const waitFor = (expr: string, ok: (v: number) => boolean) =>
  until(
    async () => {
      const v = await queryValue(expr);
      return v !== undefined && ok(v) ? v : undefined;
    },
    30_000,
    `Prometheus to report ${expr} (log: ${promLog})`,
  );

beforeAll(async () => {
  // A short task-list broadcast keeps the first scrape inside Prometheus's 1 s timeout.
  app = await startTestApp({ TASK_LIST_REPLY_TIMEOUT_MS: '300', TASK_WAIT_MAX_S: '30' });
  await app.users.createUser({ username: 'root', password: 'pw-superuser-1', isSuperuser: true });
  await app.users.createUser({ username: 'scraper', password: 'pw-scraper-12' });
  await app.users.grantPermissions('scraper', ['cybercom_queue.metrics_read']);
  await app.users.createUser({ username: 'plain', password: 'pw-plain-1234' });
  rootToken = await app.users.tokenFor('root');
  scraperToken = await app.users.tokenFor('scraper');
  plainToken = await app.users.tokenFor('plain');
  ({ worker, queue, nodeName } = await startWorker(app.ctx.settings.serviceDatabase));
  await until(
    async () =>
      (await call(app.url, 'GET', '/api/queue/?refresh=true&page_size=0', { token: rootToken })).json?.queues?.includes(queue) === true,
    20_000,
    'the worker to be listed',
  );
  const tokenFile = join(tmp, 'token');
  writeFileSync(tokenFile, scraperToken, { mode: 0o600 });
  await startPrometheus(new URL(app.url).host, tokenFile);
});

afterAll(async () => {
  prometheus?.kill('SIGTERM');
  await worker?.close();
  await app?.close();
  rmSync(tmp, { recursive: true, force: true });
});

describe('scraped by Prometheus', () => {
  it('is an up target with every expected series', async () => {
    await until(
      async () => (await promApi('/api/v1/targets'))?.activeTargets?.[0]?.health === 'up',
      30_000,
      `the target to be up (log: ${promLog})`,
    );
    expect(await waitFor('cybercom_database_up', (v) => v === 1)).toBe(1);
    expect(await waitFor('cybercom_broker_up', (v) => v === 1)).toBe(1);
    await waitFor('cybercom_database_ping_seconds', (v) => v > 0);
    await waitFor(`cybercom_worker_online{worker="${nodeName}"}`, (v) => v === 1);
    await waitFor('cybercom_workers_online', (v) => v >= 1);
    await waitFor(`cybercom_queue_consumers{queue="${queue}"}`, (v) => v >= 1);
    await waitFor(`cybercom_queue_messages{queue="${queue}"}`, (v) => v >= 0);
    await waitFor('cybercom_certificate_days_left{certificate="BROKER_TLS_CERT_FILE"}', (v) => v > 1);
    await waitFor('process_resident_memory_bytes', (v) => v > 0);
    await waitFor('nodejs_eventloop_lag_seconds', (v) => v >= 0);
    // Prometheus's own scrapes are requests too, labelled by the route pattern.
    await waitFor('sum(cybercom_http_request_duration_seconds_count{route="/api/metrics/",method="GET",status="200"})', (v) => v >= 1);
  });

  it('counts submissions and task outcomes from worker events', async () => {
    // The worker was started without task events; the API turned them on when it came online.
    // Control messages are handled in order, so once a later ping is answered it has them.
    await until(
      async () => app.ctx.metrics?.workers.snapshot().some((w) => w.node === nodeName && w.online),
      10_000,
      'the worker heartbeat',
    );
    await app.ctx.queue?.control.ping({ destination: [nodeName], timeoutMs: 2_000 });
    for (let i = 0; i < 3; i++) {
      const res = await call(app.url, 'POST', '/api/queue/run/tasks.add/?wait=10', {
        token: rootToken,
        body: { function: 'tasks.add', queue, args: [i, 1] },
      });
      expect(res.status, res.text).toBe(200);
    }
    const failed = await call(app.url, 'POST', '/api/queue/run/tasks.fail/?wait=10', {
      token: rootToken,
      body: { function: 'tasks.fail', queue, args: [] },
    });
    expect(failed.json?.status, failed.text).toBe('FAILURE');
    await waitFor('cybercom_task_submissions_total{task="tasks.add"}', (v) => v === 3);
    await waitFor('cybercom_task_events_total{task="tasks.add",state="SUCCESS"}', (v) => v === 3);
    await waitFor('cybercom_task_events_total{task="tasks.add",state="RECEIVED"}', (v) => v === 3);
    await waitFor('cybercom_task_events_total{task="tasks.fail",state="FAILURE"}', (v) => v === 1);
    // Raw paths never become labels.
    const series = await promApi(`/api/v1/series?match[]=${encodeURIComponent('cybercom_http_request_duration_seconds_count')}`);
    const routes = new Set<string>((series as { route: string }[]).map((s) => s.route));
    expect(routes).toContain('/api/queue/run/:task/');
    expect([...routes].some((r) => r.includes('tasks.add'))).toBe(false);
  });
});

describe('who may read /api/metrics', () => {
  it('refuses anonymous callers (401) and users without the role (403)', async () => {
    const anonymous = await call(app.url, 'GET', '/api/metrics');
    expect(anonymous.status).toBe(401);
    expect(anonymous.json.error.code).toBe('not_authenticated');
    const plain = await call(app.url, 'GET', '/api/metrics', { token: plainToken });
    expect(plain.status).toBe(403);
    expect(plain.json.error.code).toBe('permission_denied');
  });

  it('serves the role by token and JWT, and superusers', async () => {
    const byToken = await call(app.url, 'GET', '/api/metrics', { token: scraperToken, accept: '*/*' });
    expect(byToken.status).toBe(200);
    expect(byToken.headers.get('content-type')).toContain('text/plain');
    expect(byToken.text).toContain('# TYPE cybercom_http_request_duration_seconds histogram');
    const jwt = await call(app.url, 'POST', '/api/token/', { body: { username: 'scraper', password: 'pw-scraper-12' } });
    expect((await call(app.url, 'GET', '/api/metrics/', { bearer: jwt.json.access, accept: '*/*' })).status).toBe(200);
    expect((await call(app.url, 'GET', '/api/metrics', { token: rootToken, accept: '*/*' })).status).toBe(200);
  });

  it('serves anonymous clients from METRICS_ALLOWED_IPS, and nothing with METRICS_ENABLED=false', async () => {
    const allowed = await startTestApp({ METRICS_ALLOWED_IPS: '10.0.0.0/8, 127.0.0.1' });
    const off = await startTestApp({ METRICS_ENABLED: 'false' });
    try {
      const res = await call(allowed.url, 'GET', '/api/metrics', { accept: '*/*' });
      expect(res.status).toBe(200);
      expect(res.text).toContain('cybercom_database_up 1');
      expect((await call(off.url, 'GET', '/api/metrics/')).status).toBe(404);
    } finally {
      await allowed.close();
      await off.close();
    }
  });
});
