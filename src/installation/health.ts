/**
 * Health of an installation as its users see it, the same for both runtimes: the database and the
 * broker are logged into over TLS with a client certificate (from the host, on their published
 * ports), the API's health endpoint is fetched through the public port, and the workers must
 * answer a remote-control ping. Used by the installer's waits, `ops/status` and `rotate-certs`.
 */
import { existsSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { setTimeout as sleep } from 'node:timers/promises';
import { toBrokerSettings } from '../config/connections.js';
import { BrokerSession } from '../queue/connection/broker-session.js';
import { ControlClient } from '../queue/remote-control/control-client.js';
import { certificatePaths } from './certificates.js';
import { hostBrokerConnection, hostMongoClient } from './host-connections.js';
import type { InstallConfig } from './install-config.js';
import type { InstallLayout } from './layout.js';
import { ACCOUNTS, type Secrets } from './secrets.js';

export interface HealthCheck {
  name: 'database' | 'broker' | 'api' | 'worker';
  ok: boolean;
  detail: string;
}

export interface Installation {
  layout: InstallLayout;
  config: InstallConfig;
  secrets: Secrets;
}

function message(err: unknown): string {
  return err instanceof Error ? (err.message.split('\n')[0] ?? err.message) : String(err);
}

export async function checkDatabase(inst: Installation): Promise<HealthCheck> {
  const client = hostMongoClient(inst.layout, inst.config, inst.secrets, { timeoutMs: 3000 });
  try {
    await client.connect();
    await client.db(ACCOUNTS.authSource).command({ ping: 1 });
    return { name: 'database', ok: true, detail: `TLS login as ${ACCOUNTS.database.api} on port ${inst.config.ports.database}` };
  } catch (err) {
    return { name: 'database', ok: false, detail: message(err) };
  } finally {
    await client.close().catch(() => undefined);
  }
}

export async function checkBroker(inst: Installation): Promise<HealthCheck> {
  try {
    const connection = await hostBrokerConnection(inst.layout, inst.config, inst.secrets, { timeoutMs: 3000 });
    await connection.close().catch(() => undefined);
    return { name: 'broker', ok: true, detail: `AMQPS login as ${ACCOUNTS.broker.api} on port ${inst.config.ports.broker}` };
  } catch (err) {
    return { name: 'broker', ok: false, detail: message(err) };
  }
}

/** The API's address from this host: the proxy (compose) or the API itself (local), on the HTTPS port when it serves HTTPS. */
export function localApiUrl(config: InstallConfig): { url: URL; hostHeader: string; servername?: string } {
  const https = config.publicHost !== '' && config.https !== 'none';
  const port = https ? config.ports.https : config.ports.http;
  const host = config.publicHost === '' ? 'localhost' : config.publicHost;
  return {
    url: new URL(`${https ? 'https' : 'http'}://127.0.0.1:${port}/api/health/`),
    hostHeader: host.includes(':') ? `[${host}]` : host,
    servername: https ? host : undefined,
  };
}

export interface HttpAnswer {
  status: number;
  body: string;
}

/** GET with an explicit Host header (and SNI), so a public name is checked without DNS. */
export function getWithHost(
  url: URL,
  hostHeader: string,
  opts: { servername?: string; timeoutMs?: number; insecure?: boolean } = {},
): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = request(
      url,
      {
        method: 'GET',
        headers: { Host: hostHeader, Accept: 'application/json' },
        timeout: opts.timeoutMs ?? 5000,
        ...(url.protocol === 'https:' ? { servername: opts.servername, rejectUnauthorized: !opts.insecure } : {}),
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer from ${url.href} within ${opts.timeoutMs ?? 5000} ms`)));
    req.on('error', reject);
    req.end();
  });
}

export async function checkApi(inst: Installation): Promise<HealthCheck> {
  const target = localApiUrl(inst.config);
  try {
    const answer = await getWithHost(target.url, target.hostHeader, { servername: target.servername, insecure: true });
    const ok = answer.status === 200;
    return {
      name: 'api',
      ok,
      detail: ok ? `${target.url.origin} answers 200` : `${target.url.href} answered ${answer.status}: ${answer.body.slice(0, 200)}`,
    };
  } catch (err) {
    return { name: 'api', ok: false, detail: message(err) };
  }
}

/** A broker session as the API logs in (its account and client certificate), not yet started. */
export function apiBrokerSession(inst: Installation): BrokerSession {
  const certs = inst.layout.certsDir;
  return new BrokerSession({
    settings: toBrokerSettings({
      BROKER_URL: `amqps://localhost:${inst.config.ports.broker}/${ACCOUNTS.vhost}`,
      BROKER_USERNAME: ACCOUNTS.broker.api,
      BROKER_PASSWORD: inst.secrets.BROKER_API_PASSWORD,
      BROKER_TLS_CA_FILE: certificatePaths(certs, 'ca').certFile,
      BROKER_TLS_CERT_FILE: certificatePaths(certs, 'api').certFile,
      BROKER_TLS_KEY_FILE: certificatePaths(certs, 'api').keyFile,
      BROKER_HEARTBEAT_S: 0,
    }),
  });
}

/** Worker node names answering a remote-control ping within timeoutMs. */
export async function pingWorkers(inst: Installation, timeoutMs = 2000): Promise<string[]> {
  const session = apiBrokerSession(inst);
  session.start();
  const control = new ControlClient({ session });
  try {
    await session.waitUntilConnected(timeoutMs + 3000);
    return Object.keys(await control.broadcast('ping', {}, { timeoutMs }));
  } finally {
    await control.close().catch(() => undefined);
    await session.close().catch(() => undefined);
  }
}

export async function checkWorker(inst: Installation): Promise<HealthCheck> {
  try {
    const nodes = await pingWorkers(inst);
    return nodes.length > 0
      ? { name: 'worker', ok: true, detail: `answering: ${nodes.sort().join(', ')}` }
      : { name: 'worker', ok: false, detail: 'no worker answered a ping' };
  } catch (err) {
    return { name: 'worker', ok: false, detail: message(err) };
  }
}

export async function checkAll(inst: Installation): Promise<HealthCheck[]> {
  const [database, broker] = await Promise.all([checkDatabase(inst), checkBroker(inst)]);
  const api = await checkApi(inst);
  const worker = broker.ok ? await checkWorker(inst) : { name: 'worker' as const, ok: false, detail: 'broker unreachable' };
  return [database, broker, api, worker];
}

/** Polls checkAll until every check passes; throws with the last failures after timeoutMs. */
export async function waitUntilHealthy(
  inst: Installation,
  timeoutMs: number,
  onProgress?: (checks: HealthCheck[]) => void,
): Promise<HealthCheck[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    // Services still coming up are waited for; an installation whose files are gone is not coming back.
    if (!existsSync(inst.layout.certsDir)) throw new Error(`${inst.layout.certsDir} no longer exists (was the install directory removed?)`);
    const checks = await checkAll(inst);
    onProgress?.(checks);
    if (checks.every((c) => c.ok)) return checks;
    if (Date.now() > deadline) {
      const failing = checks.filter((c) => !c.ok).map((c) => `${c.name}: ${c.detail}`);
      throw new Error(`not healthy after ${Math.round(timeoutMs / 1000)} s: ${failing.join('; ')}`);
    }
    await sleep(2000);
  }
}
