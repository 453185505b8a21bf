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
