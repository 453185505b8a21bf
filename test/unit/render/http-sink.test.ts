import type { Server } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import express from 'express';
import type { Response } from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { renderEnvelopeStream, renderValue, ResponseStalledError } from '../../../src/render/index.js';
import type { ResponseSink } from '../../../src/render/index.js';
import { pageContext } from './support.js';

/** Compile-time check: express's res is a ResponseSink (tsc checks the test folder too). */
const asSink = (res: Response): ResponseSink => res;

/** Serves one handler with express on a loopback port; closed after each test. */
let close: (() => Promise<void>) | null = null;
async function serve(handler: (res: Response) => void | Promise<void>): Promise<string> {
  const app = express();
  // The handler's rejection is the stream error the caller would log; here it is expected.
  app.get('/', (_req, res) => void Promise.resolve(handler(res)).catch(() => undefined));
  const server = await new Promise<Server>((resolve) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

afterEach(async () => {
  await close?.();
  close = null;
});

async function* numbered(count: number, failAt?: number): AsyncGenerator<unknown> {
  for (let n = 1; n <= count; n += 1) {
    if (n === failAt) throw new Error('cursor died');
    yield { n, text: `record ${n} `.repeat(8) };
  }
}

const head = (count: number) => ({ count, meta: { page: 1, page_size: 0, pages: 1 }, next: null, previous: null });

describe('with a real express response', () => {
  it('renderValue sends a complete response', async () => {
    const url = await serve((res) => renderValue(asSink(res), 'json', 201, { ok: [1, 2] }, pageContext()));
    const response = await fetch(url);
    expect(response.status).toBe(201);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await response.json()).toEqual({ ok: [1, 2] });
  });

  it('streams a large envelope that the client reads back whole', async () => {
    const url = await serve((res) => renderEnvelopeStream(res, 'json', head(30_000), numbered(30_000), pageContext()));
    const response = await fetch(url);
    expect(response.status).toBe(200);
    const body = (await response.json()) as { count: number; results: { n: number }[] };
    expect(body.count).toBe(30_000);
    expect(body.results).toHaveLength(30_000);
    expect(body.results.at(-1)?.n).toBe(30_000);
  });

  it('a failure mid-stream reaches the client as a broken transfer, not a short document', async () => {
    const url = await serve((res) => renderEnvelopeStream(res, 'json', head(30_000), numbered(30_000, 20_000), pageContext()));
    const response = await fetch(url);
    expect(response.status).toBe(200);
    await expect(response.text()).rejects.toThrow();
  });

  it('a client that stops reading is cut off after the send timeout, and the stream ends', async () => {
    let outcome: Promise<unknown> = Promise.resolve('not started');
    const url = new URL(
      await serve((res) => {
        outcome = renderEnvelopeStream(res, 'json', head(2_000_000), numbered(2_000_000), pageContext(), 300).then(
          () => 'completed',
          (error: unknown) => error,
        );
        return outcome.then(() => undefined);
      }),
    );
    // A raw client: sends the request, reads the first bytes, then reads nothing more.
    const socket = connect(Number(url.port), url.hostname);
    socket.write(`GET / HTTP/1.1\r\nHost: ${url.host}\r\n\r\n`);
    await new Promise<void>((resolve) => socket.once('data', () => resolve()));
    socket.pause();
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    const started = performance.now();
    const result = await Promise.race([outcome, new Promise((resolve) => setTimeout(() => resolve('still streaming after 10 s'), 10_000))]);
    expect(result).toBeInstanceOf(ResponseStalledError);
    expect(performance.now() - started).toBeLessThan(10_000);
    // What the kernel still held reaches the client, then the connection ends: a cut-off transfer.
    socket.resume();
    await closed;
  });
});
