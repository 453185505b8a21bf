/**
 * Compression: which encoding an Accept-Encoding header gets, and a stream written by the
 * SinkWriter (which fills its chunks again once their write's callback says they were taken)
 * through the middleware to a real client: the bytes arrive whole and in order, and a client
 * that stops reading stops the writer (back-pressure through zlib), instead of the answer piling
 * up in memory; a stream is gzipped at the level set for streams.
 */
import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { compression, compressibleType, negotiateEncoding } from '../../../src/http/compression.js';
import { SinkWriter } from '../../../src/render/sink-writer.js';

describe('negotiateEncoding', () => {
  it.each([
    [undefined, undefined],
    ['', undefined],
    ['gzip, deflate, br', 'br'],
    ['gzip', 'gzip'],
    ['br;q=0.5, gzip', 'gzip'],
    ['br;q=0, gzip;q=0', undefined],
    ['identity', undefined],
    ['*', 'br'],
    ['*;q=0, gzip', 'gzip'],
    ['GZIP;Q=1', 'gzip'],
  ])('%s → %s', (header, encoding) => {
    expect(negotiateEncoding(header)).toBe(encoding);
  });

  it('takes text types and leaves the rest', () => {
    for (const type of [
      'text/html; charset=utf-8',
      'application/json',
      'application/x-ndjson',
      'text/csv',
      'application/geo+json',
      'application/javascript',
    ]) {
      expect(compressibleType(type), type).toBe(true);
    }
    for (const type of ['image/png', 'application/octet-stream', 'application/gzip', undefined]) expect(compressibleType(type)).toBe(false);
  });
});

let close: (() => Promise<void>) | null = null;
afterEach(async () => {
  await close?.();
  close = null;
});

/** 39 MB: many times what the connection's buffers hold (a few MB on loopback). */
const CHUNKS = 600;
const PIECE = 64 * 1024;

describe('a stream through the middleware', () => {
  it('arrives whole, and a client that stops reading holds the writer back', async () => {
    // Base64 of random bytes: text that compresses by only a quarter, so the connection fills up.
    const pieces = Array.from({ length: CHUNKS }, () => randomBytes((PIECE * 3) / 4).toString('base64'));
    let pushed = 0;
    let finished: boolean;
    const app = express();
    app.use(compression({ except: [] }));
    app.get('/', (_req, res) => {
      const writer = new SinkWriter(res, () => res.status(200).setHeader('Content-Type', 'application/x-ndjson'), 0, PIECE);
      void (async () => {
        for (const piece of pieces) {
          await writer.push(piece);
          pushed += piece.length;
        }
        writer.end();
        finished = true;
      })();
    });
    const server = await new Promise<Server>((resolve) => {
      const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
    });
    close = () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
    const port = (server.address() as AddressInfo).port;
    for (const encoding of ['br', 'gzip'] as const) {
      pushed = 0;
      finished = false;
      const received: Buffer[] = [];
      const done = new Promise<{ headers: Record<string, unknown> }>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port, path: '/', headers: { 'accept-encoding': encoding } }, (res) => {
          res.pause();
          // The client reads nothing for a while: the writer must wait, not push the whole answer into memory.
          void sleep(400).then(() => {
            pushedWhilePaused = pushed;
            res.on('data', (chunk: Buffer) => received.push(chunk));
            res.on('end', () => resolve({ headers: res.headers }));
            res.resume();
          });
        });
        req.on('error', reject);
        req.end();
      });
      let pushedWhilePaused = 0;
      const { headers } = await done;
      expect(headers['content-encoding']).toBe(encoding);
      expect(finished).toBe(true);
      // What the connection's buffers and zlib's hold, no more (uncompressed, about 4 MB here).
      expect(pushedWhilePaused, encoding).toBeLessThan((CHUNKS * PIECE) / 4);
      const body = Buffer.concat(received);
      const text = (encoding === 'br' ? brotliDecompressSync(body) : gunzipSync(body)).toString();
      expect(text.length).toBe(CHUNKS * PIECE);
      expect(text === pieces.join(''), encoding).toBe(true);
      // A stream is gzipped at level 3 (whole bodies at 6): the bytes level 3 gives in one call.
      if (encoding === 'gzip') expect(body.equals(gzipSync(Buffer.from(pieces.join('')), { level: 3 }))).toBe(true);
    }
  }, 60_000);
});
