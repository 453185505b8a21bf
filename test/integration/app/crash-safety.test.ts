/**
 * Requests that once made an async handler throw outside the error mapper, which ends the whole
 * API process (one anonymous request every few seconds kept it down): each must now be a 4xx
 * with the JSON error body, and the same server must keep answering.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../support/app.js';
import { requestWithHost } from '../../support/host-request.js';

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});

afterAll(async () => {
  await app?.close();
});

describe('the health endpoint under hostile input', () => {
  it.each([
    ['an invalid JSONP callback', '/api/health/?format=jsonp&callback=a-b', 'localhost'],
    ['a Host header with a non-numeric port', '/api/health/', 'localhost:abc'],
    ['an unknown format', '/api/health/?format=yaml', 'localhost'],
  ])('answers %s with a 4xx JSON error and keeps serving', async (_what, path, host) => {
    const answer = await requestWithHost(`${app.url}${path}`, { host });
    expect(answer.status).toBeGreaterThanOrEqual(400);
    expect(answer.status).toBeLessThan(500);
    expect(JSON.parse(answer.body).error.status).toBe(answer.status);
    const healthy = await requestWithHost(`${app.url}/api/health/`, { host: 'localhost' });
    expect(healthy.status).toBe(200);
  });
});

describe('requests the server cannot read are the caller’s fault (4xx), never a 500', () => {
  let token: string;
  beforeAll(async () => {
    await app.users.createUser({ username: 'prober', password: 'prober-pass-1', isSuperuser: true });
    token = await app.users.tokenFor('prober');
  });

  const send = (path: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}) =>
    fetch(new URL(path, app.url), {
      method: init.method ?? 'GET',
      headers: { accept: 'application/json', authorization: `Token ${token}`, ...init.headers },
      body: init.body,
    });

  it.each([
    ['a path parameter that is not UTF-8', '/api/data_store/data/%FF/'],
    ['the same in a collection', '/api/data_store/data/x/%FF/'],
    ['the same in a task id', '/api/queue/task/%FF/'],
    ['an encoded lone surrogate', '/api/data_store/data/%ED%A0%80/'],
  ])('%s', async (_what, path) => {
    const variants: Record<string, string>[] = [{}, { authorization: '' }];
    for (const headers of variants) {
      const res = await send(path, { headers });
      expect(res.status, path).toBeGreaterThanOrEqual(400);
      expect(res.status, path).toBeLessThan(500);
      expect((await res.json()).error.status).toBe(res.status);
    }
  });

  it.each(['gzip', 'deflate'])('a body that is not valid %s data', async (encoding) => {
    const res = await send('/api/data_store/data/', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-encoding': encoding },
      body: 'plainly not compressed',
    });
    expect(res.status).toBe(400);
    expect((await res.json()).error.code).toBe('invalid_body');
  });

  it('a database name with a lone surrogate is refused and nothing is created', async () => {
    const res = await send('/api/data_store/data/', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"database": "lone\\ud800x"}',
    });
    expect(res.status).toBe(400);
    expect((await res.json()).error.code).toBe('invalid_name');
    const list = await (await send('/api/data_store/data/?page_size=0')).json();
    expect(list.results.map((r: { database: string }) => r.database).filter((name: string) => name.startsWith('lone'))).toEqual([]);
  });
});
