/**
 * Compressed answers through the real server: text answers in Brotli or gzip as Accept-Encoding
 * asks, the same bytes as before for clients that do not ask; a streamed export of 100,000
 * records compressed as it streams (its first bytes arrive long before its last); small answers
 * and the pages that carry a CSRF token left alone; the explorer's browser files under
 * content-hashed names, cached for good and sent precompressed.
 */
import { request } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApp, type TestApp } from '../../support/app.js';
import { createFixtureCollection, insertFixtureDocuments } from '../../support/explorer-fixture.js';
import { STATIC_NAMES, staticPath } from '../../../src/explorer/static-files.js';
import { browsableScriptPath } from '../../../src/render/html-script.js';

const RECORDS = 100_000;
let app: TestApp;
let token: string;
let db: string;
const col = 'readings';

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  /** Milliseconds from the request to its first body byte, and to its last. */
  firstByteMs: number;
  lastByteMs: number;
}

/** A GET through node:http, which sends only the headers given and decodes nothing. */
function get(path: string, headers: Record<string, string> = {}): Promise<Raw> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, app.url), { headers: { authorization: `Token ${token}`, ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      let firstByteMs = Number.NaN;
      res.on('data', (chunk: Buffer) => {
        if (chunks.length === 0) firstByteMs = performance.now() - started;
        chunks.push(chunk);
      });
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(chunks),
          firstByteMs,
          lastByteMs: performance.now() - started,
        }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

const decoded = (raw: Raw): Buffer => {
  const encoding = raw.headers['content-encoding'];
  if (encoding === 'br') return brotliDecompressSync(raw.body);
  if (encoding === 'gzip') return gunzipSync(raw.body);
  return raw.body;
};

beforeAll(async () => {
  app = await startTestApp();
  await app.users.createUser({ username: 'root', password: 'pw-root-12345', isSuperuser: true });
  token = await app.users.tokenFor('root');
  db = `${app.prefix}compressed`;
  await createFixtureCollection(app.url, token, db, col);
  await insertFixtureDocuments(app.ctx.mongo.db(db).collection(col), RECORDS);
}, 300_000);

afterAll(async () => {
  if (app === undefined) return;
  await call(app.url, 'POST', '/api/data_store/data/', { token, body: { database: db, action: 'delete' } }).catch(() => undefined);
  await app.close();
});

describe('text answers', () => {
  const pagePath = () => `/api/data_store/data/${db}/${col}/?format=json&page_size=50`;

  it('are Brotli or gzip as Accept-Encoding asks, the same bytes once decoded, and as before for clients that do not ask', async () => {
    const plain = await get(pagePath());
    expect(plain.status).toBe(200);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.headers.vary).toMatch(/Accept-Encoding/);
    const br = await get(pagePath(), { 'accept-encoding': 'gzip, deflate, br' });
    expect(br.headers['content-encoding']).toBe('br');
    const gzip = await get(pagePath(), { 'accept-encoding': 'gzip' });
    expect(gzip.headers['content-encoding']).toBe('gzip');
    const refused = await get(pagePath(), { 'accept-encoding': 'br;q=0, gzip;q=0' });
    expect(refused.headers['content-encoding']).toBeUndefined();
    expect(refused.body.equals(plain.body)).toBe(true);
    expect(decoded(br).equals(plain.body)).toBe(true);
    expect(decoded(gzip).equals(plain.body)).toBe(true);
    expect(br.body.length).toBeLessThan(plain.body.length / 3);
  });

  it('keeps an ETag as its handler set it, so a compressed file still revalidates', async () => {
    const script = await get('/api/static/browsable.js', { 'accept-encoding': 'gzip' });
    expect(script.headers['content-encoding']).toBe('gzip');
    const etag = String(script.headers.etag);
    const again = await get('/api/static/browsable.js', { 'accept-encoding': 'gzip', 'if-none-match': etag });
    expect(again.status).toBe(304);
  });

  it('compresses explorer pages, and leaves small answers and the login page alone', async () => {
    const table = await get(`/api/explore/data_store/${db}/${col}/`, { 'accept-encoding': 'gzip', accept: 'text/html' });
    expect(table.status).toBe(200);
    expect(table.headers['content-encoding']).toBe('gzip');
    expect(decoded(table).toString()).toContain('data-testid="records"');
    const none = encodeURIComponent(JSON.stringify({ filter: { kind: 'none' } }));
    const small = await get(`/api/data_store/data/${db}/${col}/?format=json&query=${none}`, { 'accept-encoding': 'br' });
    expect(small.status).toBe(200);
    expect(small.body.length).toBeLessThan(1024);
    expect(small.headers['content-encoding']).toBeUndefined();
    const login = await get('/api/auth/login/?next=/api/', { 'accept-encoding': 'br', accept: 'text/html' });
    expect(login.status).toBe(200);
    expect(login.body.toString()).toContain('csrfmiddlewaretoken');
    expect(login.headers['content-encoding']).toBeUndefined();
  });

  it('streams a 100,000-record CSV export compressed: its first bytes arrive long before its last, every row there', async () => {
    const path = `/api/data_store/data/${db}/${col}/?format=csv&page_size=0`;
    const csv = await get(path, { 'accept-encoding': 'br' });
    expect(csv.status).toBe(200);
    expect(csv.headers['content-encoding']).toBe('br');
    expect(csv.headers['content-length']).toBeUndefined();
    const text = decoded(csv).toString();
    expect(text.trim().split('\r\n').length).toBe(RECORDS + 1);
    // Not gathered into one body first: the export was on its way while the records were still being read.
    expect(csv.firstByteMs).toBeLessThan(csv.lastByteMs / 2);
    const plain = await get(path);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body.equals(Buffer.from(text))).toBe(true);
    expect(csv.body.length).toBeLessThan(plain.body.length / 4);
  }, 120_000);
});

describe("the explorer's and the browsable page's browser files", () => {
  it('are served under content-hashed names, cached for good, and compressed', async () => {
    expect(STATIC_NAMES.length).toBeGreaterThan(5);
    for (const path of [...STATIC_NAMES.map(staticPath), browsableScriptPath()]) {
      expect(path).toMatch(/\.[A-Za-z0-9]{12}\.(js|css)$/);
      const plain = await get(path);
      expect(plain.status, path).toBe(200);
      expect(plain.headers['cache-control'], path).toMatch(/\bimmutable\b/);
      for (const encoding of ['br', 'gzip']) {
        const packed = await get(path, { 'accept-encoding': encoding });
        expect(packed.headers['content-encoding'], path).toBe(encoding);
        expect(decoded(packed).equals(plain.body), path).toBe(true);
        expect(packed.body.length, path).toBeLessThan(plain.body.length);
      }
    }
    // A name with another hash is no file: an old page's file is not taken for the new one.
    expect((await get(staticPath('map.js').replace(/\.[A-Za-z0-9]{12}\./, '.aaaaaaaaaaaa.'))).status).not.toBe(200);
    expect((await get(browsableScriptPath().replace(/\.[A-Za-z0-9]{12}\./, '.aaaaaaaaaaaa.'))).status).not.toBe(200);
  });

  it('are what the pages load', async () => {
    const page = await get(`/api/explore/data_store/${db}/${col}/?tab=map`, { accept: 'text/html' });
    expect(page.body.toString()).toContain(`src="${staticPath('leaflet.js')}"`);
    expect(page.body.toString()).toContain(`href="${staticPath('leaflet.css')}"`);
  });
});
