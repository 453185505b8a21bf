import { describe, expect, it } from 'vitest';
import express from 'express';
import helmet from 'helmet';
import type { AddressInfo } from 'node:net';
import { API_POLICY, contentSecurityPolicy, isMachineAnswer, securityHeaders, tileOrigin } from '../../../src/http/security-headers.js';

/** Serves `app` on a free port for the duration of `use`. */
async function serving<T>(app: express.Express, use: (base: string) => Promise<T>): Promise<T> {
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  try {
    return await use(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}

/** The response headers of GET / on an app with `middleware` in front of a 204 answer. */
async function headersOf(middleware: express.RequestHandler[], requests = 1): Promise<Headers[]> {
  const app = express();
  app.disable('x-powered-by');
  app.use(...middleware);
  app.get('/', (_req, res) => res.status(204).end());
  return serving(app, async (base) => {
    const all: Headers[] = [];
    for (let i = 0; i < requests; i++) all.push((await fetch(`${base}/`)).headers);
    return all;
  });
}

const helmetOptions = (https: boolean) => ({
  contentSecurityPolicy: false,
  strictTransportSecurity: https ? { maxAge: 31536000 } : false,
  crossOriginEmbedderPolicy: false,
  xFrameOptions: { action: 'deny' as const },
  referrerPolicy: { policy: 'same-origin' as const },
});

describe('security headers', () => {
  it.each([false, true])('sends exactly the headers helmet itself sends (https: %s), plus the policy', async (https) => {
    const [ours] = await headersOf(securityHeaders({ https }));
    const [helmets] = await headersOf([helmet(helmetOptions(https))]);
    const without = (h: Headers | undefined, ...names: string[]) =>
      [...(h?.entries() ?? [])].filter(([name]) => !['date', 'connection', 'keep-alive', ...names].includes(name));
    expect(without(ours, 'content-security-policy')).toEqual(without(helmets));
    expect(ours?.get('strict-transport-security')?.startsWith('max-age=31536000') ?? false).toBe(https);
    expect(ours?.get('x-frame-options')).toBe('DENY');
  });

  it('gives every response a nonce of its own: 16 random bytes, never repeated (also past a refill of the pool)', async () => {
    const responses = await headersOf(securityHeaders({ https: false }), 600);
    const nonces = responses.map((h) => /'nonce-([^']+)'/.exec(h.get('content-security-policy') ?? '')?.[1]);
    for (const nonce of nonces) expect(Buffer.from(nonce ?? '', 'base64')).toHaveLength(16);
    expect(new Set(nonces).size).toBe(nonces.length);
    const [first] = nonces;
    expect(responses[0]?.get('content-security-policy')).toBe(contentSecurityPolicy(first ?? ''));
  });

  it('writes the policy around the nonce, with inline styles only when asked', () => {
    expect(contentSecurityPolicy('abc')).toBe(
      "default-src 'self'; script-src 'self' 'nonce-abc'; style-src 'self' 'nonce-abc'; img-src 'self' data:; font-src 'self' data:; " +
        "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; object-src 'none'; base-uri 'self'",
    );
    expect(contentSecurityPolicy('abc', { inlineStyles: true })).toContain(
      "script-src 'self' 'nonce-abc'; style-src 'self' 'unsafe-inline';",
    );
  });

  it('allows images from the given origins (the map tile server) only when given', async () => {
    const [plain] = await headersOf(securityHeaders({ https: false }));
    expect(plain?.get('content-security-policy')).toContain("img-src 'self' data:; ");
    const origin = tileOrigin('https://tiles.example.org:8443/osm/{z}/{x}/{y}.png?key=1');
    expect(origin).toBe('https://tiles.example.org:8443');
    const [withTiles] = await headersOf(securityHeaders({ https: false, imageOrigins: [origin] }));
    expect(withTiles?.get('content-security-policy')).toContain("img-src 'self' data: https://tiles.example.org:8443; ");
    expect(withTiles?.get('content-security-policy')).not.toMatch(/(script|connect|default)-src[^;]*tiles/);
  });

  /** The headers of one answer of `answer`, behind the security headers. */
  async function answerHeaders(answer: express.RequestHandler, https = false): Promise<Headers> {
    const app = express();
    app.disable('x-powered-by');
    app.use(...securityHeaders({ https }));
    app.get('/', answer);
    return serving(app, async (base) => (await fetch(`${base}/`)).headers);
  }
  const securityNames = (h: Headers) =>
    [...h.keys()].filter((name) => !['date', 'connection', 'keep-alive', 'content-type', 'content-length', 'etag'].includes(name)).sort();

  it.each([false, true])('sends machine answers the API set only, with no nonce (https: %s)', async (https) => {
    const h = await answerHeaders((_req, res) => res.json({ a: 1 }), https);
    expect(h.get('content-security-policy')).toBe(API_POLICY);
    expect(h.get('cache-control')).toBe('no-store');
    expect(h.get('x-content-type-options')).toBe('nosniff');
    expect(h.get('x-frame-options')).toBe('DENY');
    expect(h.get('cross-origin-resource-policy')).toBe('same-origin');
    expect(h.get('strict-transport-security')?.startsWith('max-age=31536000') ?? false).toBe(https);
    expect(securityNames(h)).toEqual(
      [
        'cache-control',
        'content-security-policy',
        'cross-origin-resource-policy',
        'x-content-type-options',
        'x-frame-options',
        ...(https ? ['strict-transport-security'] : []),
      ].sort(),
    );
  });

  it('chooses the set by the Content-Type the answer goes out with', async () => {
    const typed = (type: string) => (_req: express.Request, res: express.Response) => res.type(type).send('x');
    for (const type of ['text/csv; charset=utf-8', 'application/x-ndjson; charset=utf-8', 'application/xml; charset=utf-8']) {
      expect((await answerHeaders(typed(type))).get('content-security-policy'), type).toBe(API_POLICY);
    }
    for (const type of ['text/html; charset=utf-8', 'application/javascript; charset=utf-8', 'text/css', 'image/png']) {
      const h = await answerHeaders(typed(type));
      expect(h.get('content-security-policy'), type).toMatch(/^default-src 'self'; script-src 'self' 'nonce-/);
      expect(h.get('referrer-policy'), type).toBe('same-origin');
      expect(h.get('cache-control'), type).toBeNull();
    }
    // A type given to writeHead itself counts as well.
    const written = await answerHeaders((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
    });
    expect(written.get('content-security-policy')).toBe(API_POLICY);
    expect(written.get('referrer-policy')).toBeNull();
  });

  it("keeps a route's own policy (with the page set around it) and its own Cache-Control", async () => {
    const own = await answerHeaders((_req, res) => {
      res.setHeader('Content-Security-Policy', "default-src 'self'");
      res.json({});
    });
    expect(own.get('content-security-policy')).toBe("default-src 'self'");
    expect(own.get('referrer-policy')).toBe('same-origin');
    const cached = await answerHeaders((_req, res) => {
      res.setHeader('Cache-Control', 'public, max-age=60');
      res.json({});
    });
    expect(cached.get('cache-control')).toBe('public, max-age=60');
    expect(cached.get('content-security-policy')).toBe(API_POLICY);
  });

  it('tells machine Content-Types from the others', () => {
    for (const type of [
      'application/json',
      'application/problem+json',
      'APPLICATION/JSON; charset=utf-8',
      'text/csv',
      'application/x-ndjson',
    ]) {
      expect(isMachineAnswer(type), type).toBe(true);
    }
    for (const type of [undefined, 42, 'text/html', 'application/javascript', 'application/jsonp', 'text/csvx', 'image/svg+xml']) {
      expect(isMachineAnswer(type), String(type)).toBe(false);
    }
  });
});
