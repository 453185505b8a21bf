/**
 * The local runtime with a public host and `--https files`: no proxy, so the API serves HTTPS
 * itself on the HTTPS port with the operator's certificate, the HTTP port only redirects, and
 * the installer's public-URL check and ops/status go over HTTPS.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCertificateAuthority, issueServerCertificate } from '../../../src/pki/certificates.js';
import { freePort } from '../../../src/local-services/ports.js';
import { requestWithHost, type HostAnswer } from '../../support/host-request.js';
import { ADMIN_PASSWORD, install, prepareInstall, runTool, type TestInstall } from './support.js';

const HOST = 'data.test.example';
let target: TestInstall;
let scratch: string;
let caPem: string;
let httpsPort: number;
let output: string;

const send = (url: string, init: { method?: string; host: string; json?: unknown }): Promise<HostAnswer> =>
  requestWithHost(url, { ...init, ca: caPem, servername: HOST });

beforeAll(async () => {
  target = await prepareInstall('https');
  scratch = await mkdtemp(join(tmpdir(), 'cybercom-it-https-files-'));
  const ca = await createCertificateAuthority({ commonName: 'operator test CA' });
  const cert = await issueServerCertificate(ca, { commonName: HOST, dnsNames: [HOST], ipAddresses: [], validityDays: 90 });
  caPem = ca.certPem;
  await writeFile(join(scratch, 'fullchain.pem'), cert.certPem + ca.certPem);
  await writeFile(join(scratch, 'privkey.pem'), cert.keyPem, { mode: 0o600 });
  httpsPort = await freePort();
  const result = await install(
    target,
    '--public-host',
    HOST,
    '--runtime',
    'local',
    '--https',
    'files',
    '--tls-cert-file',
    join(scratch, 'fullchain.pem'),
    '--tls-key-file',
    join(scratch, 'privkey.pem'),
    '--https-port',
    String(httpsPort),
  );
  output = result.output;
}, 300_000);

afterAll(async () => {
  await target?.cleanup();
  await rm(scratch, { recursive: true, force: true });
}, 120_000);

describe('./installer --public-host … --https files (local runtime)', () => {
  it("checks the public URL over HTTPS and configures the API with the operator's files", async () => {
    expect(output).toContain(`https://${HOST}:${httpsPort}/api/health/ ok`);
    const serviceEnv = await readFile(join(target.dir, 'config', 'service.env'), 'utf8');
    expect(serviceEnv).toMatch(new RegExp(`^HTTP_PORT=${httpsPort}$`, 'm'));
    expect(serviceEnv).toMatch(new RegExp(`^HTTP_REDIRECT_PORT=${target.ports.http}$`, 'm'));
    expect(serviceEnv).toContain(`HTTPS_CERT_FILE=${join(scratch, 'fullchain.pem')}`);
  });

  it('serves the API over HTTPS with that certificate, HSTS included, and logs in', async () => {
    const health = await send(`https://127.0.0.1:${httpsPort}/api/health/`, { host: `${HOST}:${httpsPort}` });
    expect(health.status).toBe(200);
    expect(health.headers['strict-transport-security']).toContain('max-age=');
    const token = await send(`https://127.0.0.1:${httpsPort}/api/token/`, {
      method: 'POST',
      host: `${HOST}:${httpsPort}`,
      json: { username: 'admin', password: ADMIN_PASSWORD },
    });
    expect(token.status, token.body).toBe(200);
    expect(typeof JSON.parse(token.body).access).toBe('string');
  });

  it('answers the HTTP port only with redirects to HTTPS, and plaintext never reaches the API', async () => {
    const redirect = await send(`http://127.0.0.1:${target.ports.http}/api/user/`, { host: HOST });
    expect(redirect.status).toBe(308);
    expect(redirect.headers.location).toBe(`https://${HOST}:${httpsPort}/api/user/`);
    await expect(send(`http://127.0.0.1:${httpsPort}/api/health/`, { host: HOST })).rejects.toThrow();
  });

  it('ops/status checks the API over HTTPS', async () => {
    const result = await runTool('ops/status', ['--dir', target.dir, '--json']);
    expect(result.code, result.output).toBe(0);
    const api = (JSON.parse(result.stdout) as { checks: Array<{ name: string; ok: boolean; detail: string }> }).checks.find(
      (c) => c.name === 'api',
    );
    expect(api).toMatchObject({ ok: true });
    expect(api?.detail).toContain(`https://127.0.0.1:${httpsPort}`);
  });
});
