/**
 * The API serving HTTPS itself (HTTPS_CERT_FILE/HTTPS_KEY_FILE), as the local runtime does for a
 * public host, with the plain-HTTP port answering only redirects (HTTP_REDIRECT_PORT).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpServer, type RunningServer } from '../../../src/app/server.js';
import { createLogger } from '../../../src/log/logger.js';
import { createCertificateAuthority, issueServerCertificate } from '../../../src/pki/certificates.js';
import { createServiceContext } from '../../../src/app/service-context.js';
import { freePort } from '../../../src/local-services/ports.js';
import { testSettings } from '../../support/app.js';
import { requestWithHost, type HostAnswer } from '../../support/host-request.js';

let dir: string;
let caPem: string;
let running: RunningServer;
let httpsPort: number;
let redirectPort: number;

const get = (url: string, init: { host: string; ca?: string; method?: string; json?: unknown }): Promise<HostAnswer> =>
  requestWithHost(url, { ...init, servername: 'api.test.example' });

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cybercom-https-'));
  const ca = await createCertificateAuthority({ commonName: 'test public CA' });
  const server = await issueServerCertificate(ca, {
    commonName: 'api.test.example',
    dnsNames: ['api.test.example'],
    ipAddresses: [],
    validityDays: 30,
  });
  caPem = ca.certPem;
  await writeFile(join(dir, 'cert.pem'), server.certPem);
  await writeFile(join(dir, 'key.pem'), server.keyPem, { mode: 0o600 });
  httpsPort = await freePort();
  redirectPort = await freePort();
  const settings = testSettings({
    ALLOWED_HOSTS: 'api.test.example',
    LOG_LEVEL: 'silent',
    HTTP_HOST: '127.0.0.1',
    HTTP_PORT: String(httpsPort),
    HTTPS_CERT_FILE: join(dir, 'cert.pem'),
    HTTPS_KEY_FILE: join(dir, 'key.pem'),
    HTTP_REDIRECT_PORT: String(redirectPort),
  });
  const ctx = await createServiceContext(settings, createLogger('silent'));
  await ctx.auth.users.ensureSuperuser({ username: 'tls-admin', email: 'tls@example.org', password: 'tls-password-1234' });
  running = await startHttpServer(ctx);
});

afterAll(async () => {
  await running?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('API over HTTPS without a proxy', () => {
  it('serves the API over TLS with the configured certificate', async () => {
    expect(running.url.startsWith('https://')).toBe(true);
    const answer = await get(`https://127.0.0.1:${httpsPort}/api/health/`, { host: `api.test.example:${httpsPort}`, ca: caPem });
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toMatchObject({ status: 'ok' });
    expect(answer.headers['strict-transport-security']).toBe('max-age=31536000; includeSubDomains');
  });

  it('refuses plaintext on the HTTPS port', async () => {
    await expect(get(`http://127.0.0.1:${httpsPort}/api/health/`, { host: 'api.test.example' })).rejects.toThrow();
  });

  it('marks the session and CSRF cookies Secure', async () => {
    const answer = await get(`https://127.0.0.1:${httpsPort}/api/auth/login/`, {
      host: `api.test.example:${httpsPort}`,
      ca: caPem,
      method: 'POST',
      json: { username: 'tls-admin', password: 'tls-password-1234' },
    });
    expect(answer.status, answer.body).toBe(200);
    const cookies = ([] as string[]).concat(answer.headers['set-cookie'] ?? []);
    expect(cookies.length).toBeGreaterThan(0);
    for (const cookie of cookies) expect(cookie).toMatch(/;\s*Secure/i);
  });

  it('redirects plain HTTP to the same path over HTTPS, keeping the method (308)', async () => {
    const answer = await get(`http://127.0.0.1:${redirectPort}/api/data_store/data/?page=2`, { host: 'api.test.example', method: 'POST' });
    expect(answer.status).toBe(308);
    expect(answer.headers.location).toBe(`https://api.test.example:${httpsPort}/api/data_store/data/?page=2`);
    expect(JSON.parse(answer.body).error.code).toBe('https_required');
  });

  it('does not redirect for hosts outside ALLOWED_HOSTS', async () => {
    const answer = await get(`http://127.0.0.1:${redirectPort}/`, { host: 'evil.example' });
    expect(answer.status).toBe(400);
    expect(answer.headers.location).toBeUndefined();
    expect(JSON.parse(answer.body).error.code).toBe('disallowed_host');
  });
});
