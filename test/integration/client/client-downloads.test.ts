/** GET /api/client/python/...: the client's wheel, served without credentials, or a JSON 404 saying how to build it. */
import { createHash } from 'node:crypto';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApp, type TestApp } from '../../support/app.js';

let dir: string;
let app: TestApp;
const WHEEL = 'cybercom-0.10.0-py3-none-any.whl';
const BYTES = Buffer.from('PK\u0003\u0004 not really a zip');

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'client-downloads-'));
  app = await startTestApp({ CLIENT_DOWNLOADS_DIR: dir });
});

afterAll(async () => {
  await app?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('client downloads', () => {
  it('answers 404 client_not_built with how to build it while there is no wheel', async () => {
    for (const path of ['/api/client/python/', '/api/client/python/simple/cybercom/', `/api/client/python/${WHEEL}`]) {
      const res = await call(app.url, 'GET', path);
      expect(res.status, path).toBe(404);
      expect(res.json.error.code).toBe('client_not_built');
      expect(res.json.error.message).toContain('python-client.sh');
    }
  });

  it('serves the newest wheel, its description and a pip index, without credentials', async () => {
    await mkdir(join(dir, 'python'));
    await writeFile(join(dir, 'python', 'cybercom-0.9.0-py3-none-any.whl'), 'old');
    await writeFile(join(dir, 'python', WHEEL), BYTES);
    await writeFile(join(dir, 'python', 'notes.txt'), 'not served');

    const info = await call(app.url, 'GET', '/api/client/python/');
    expect(info.status).toBe(200);
    const sha256 = createHash('sha256').update(BYTES).digest('hex');
    expect(info.json).toMatchObject({ package: 'cybercom', version: '0.10.0', sha256, size: BYTES.length });
    expect(info.json.wheel).toBe(`${app.url}/api/client/python/${WHEEL}`);
    expect(info.json.install).toBe(`pip install ${app.url}/api/client/python/${WHEEL}`);

    const wheel = await fetch(info.json.wheel, { redirect: 'manual' });
    expect(wheel.status).toBe(200);
    expect(wheel.headers.get('content-type')).toBe('application/zip');
    expect(Buffer.from(await wheel.arrayBuffer())).toEqual(BYTES);

    const page = await call(app.url, 'GET', '/api/client/python/simple/cybercom/', { accept: 'text/html' });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(page.text).toContain(`href="../../${WHEEL}#sha256=${sha256}"`);
    const root = await call(app.url, 'GET', '/api/client/python/simple/', { accept: 'text/html' });
    expect(root.text).toContain('href="cybercom/"');
  });

  it('serves nothing else from the directory', async () => {
    for (const path of [
      '/api/client/python/notes.txt',
      '/api/client/python/cybercom-0.9.0-py3-none-any.whl',
      '/api/client/python/..%2Fsecret',
    ]) {
      const res = await call(app.url, 'GET', path);
      expect(res.status, path).toBe(404);
      expect(res.json.error.code).toBe('no_such_file');
    }
    const other = await call(app.url, 'GET', '/api/client/python/simple/requests/');
    expect(other.status).toBe(404);
    expect(other.json.error.code).toBe('no_such_project');
  });
});
