/**
 * Compressed answers: a text answer (HTML, JSON, NDJSON, CSV, XML, JavaScript, CSS, GeoJSON) goes
 * out as Brotli or gzip when the client's Accept-Encoding takes it (Brotli preferred), and exactly
 * as before when it does not.
 *
 * How it fits the rest:
 * - Whatever writes the answer (express's `send`, the streamed exports' SinkWriter) writes to the
 *   response as usual. The choice is made when the first byte would go out, from the status and
 *   the headers set by then, so the headers are right before they are sent.
 * - Streams stay streams: each write goes through a zlib stream to the connection as it comes,
 *   never gathered into one body. A write's callback is called once zlib has taken the chunk
 *   (the writer may then fill that buffer again), and a write returns false, with 'drain' to
 *   follow, while either zlib or the connection is behind: the writer's back-pressure holds end
 *   to end. (The `compression` package calls no write callbacks, which the SinkWriter relies on.)
 * - A whole body written at once (`send`, `json`) under WHOLE_SYNC_BYTES is compressed in one
 *   call and keeps its Content-Length; a larger one is streamed like an export.
 * - Small answers (under MIN_BYTES when their size is known) are left alone: the headers would
 *   cost more than they save.
 *
 * Not compressed, against BREACH (a secret in a compressed answer that also reflects what the
 * request sent can be guessed from the answer's length): anything but GET, answers that set a
 * cookie (the session's and the CSRF cookie's answers), and the paths given as `except` (where
 * pages carry a CSRF token in the page: the login forms, the admin site). The explorer's and the
 * browsable API's pages carry no secret: the CSRF token is read from its cookie by their script,
 * and the CSP nonce is new for every answer.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { brotliCompressSync, constants, createBrotliCompress, createGzip, gzipSync, type BrotliCompress, type Gzip } from 'node:zlib';
import type { RequestHandler } from 'express';

/** Bodies smaller than this are sent as they are. */
export const MIN_BYTES = 1024;
/** Whole bodies up to this size are compressed in one call; larger ones are streamed through zlib. */
const WHOLE_SYNC_BYTES = 1024 * 1024;
/**
 * Brotli at quality 4 and gzip at level 6 (its default) for whole bodies: near the best ratio text
 * gets for the CPU.
 */
const BROTLI_QUALITY = 4;
const GZIP_LEVEL = 6;
/**
 * gzip at level 3 for streamed answers (listings, exports, the Python client's reads, whole bodies
 * over WHOLE_SYNC_BYTES): on record NDJSON 0.4 to 0.65 of level 6's CPU for about a tenth more
 * bytes, and cheaper for the client to inflate, so that a long stream is paced by the database,
 * not by compressing. Level 1 (nginx's default) saves a further sixth of level 6's CPU for about
 * twice the extra bytes.
 */
const GZIP_STREAM_LEVEL = 3;

/**
 * Brotli holds back its output until a large block of input is in (seconds of a streamed export):
 * flushed after this much input, a stream keeps moving, at a cost of under 1 % in size.
 */
const BROTLI_FLUSH_BYTES = 256 * 1024;

export type Encoding = 'br' | 'gzip';

const COMPRESSIBLE =
  /^(text\/|application\/(json|x-ndjson|ndjson|javascript|xml|geo\+json|ld\+json|problem\+json|manifest\+json)|image\/svg\+xml|[^;]*\+(json|xml)\b)/i;

/** Whether a Content-Type is text worth compressing. */
export function compressibleType(type: string | undefined): boolean {
  return type !== undefined && COMPRESSIBLE.test(type);
}

/**
 * The encoding to answer with, from an Accept-Encoding header: Brotli, else gzip, each unless
 * refused with `q=0` (also by `*;q=0`); none when the header is absent.
 */
export function negotiateEncoding(header: string | undefined): Encoding | undefined {
  if (header === undefined || header.trim() === '') return undefined;
  const weights = new Map<string, number>();
  for (const part of header.split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    if (name === undefined || name === '') continue;
    const q = params.map((p) => /^\s*q=([0-9.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
    const weight = q === undefined ? 1 : Number(q);
    weights.set(name, Number.isFinite(weight) ? weight : 0);
  }
  const star = weights.get('*');
  const wanted = (name: Encoding): number => weights.get(name) ?? star ?? 0;
  const br = wanted('br');
  const gzip = wanted('gzip');
  if (br > 0 && br >= gzip) return 'br';
  if (gzip > 0) return 'gzip';
  return undefined;
}

function compressWhole(body: Buffer, encoding: Encoding): Buffer {
  return encoding === 'br'
    ? brotliCompressSync(body, {
        params: { [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY, [constants.BROTLI_PARAM_SIZE_HINT]: body.length },
      })
    : gzipSync(body, { level: GZIP_LEVEL });
}

function compressor(encoding: Encoding): BrotliCompress | Gzip {
  return encoding === 'br'
    ? createBrotliCompress({ params: { [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY } })
    : createGzip({ level: GZIP_STREAM_LEVEL });
}

type WriteCallback = (error?: Error | null) => void;
type Chunk = string | Uint8Array;

function asBuffer(chunk: Chunk | undefined, encoding: BufferEncoding | undefined): Buffer | undefined {
  if (chunk === undefined || chunk === null) return undefined;
  if (typeof chunk === 'string') return Buffer.from(chunk, encoding ?? 'utf8');
  return Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
}

/** A `write`/`end` call's optional encoding and callback, in either place. */
function splitArgs(args: unknown[]): { encoding?: BufferEncoding; callback?: WriteCallback } {
  const out: { encoding?: BufferEncoding; callback?: WriteCallback } = {};
  for (const arg of args) {
    if (typeof arg === 'function') out.callback = arg as WriteCallback;
    else if (typeof arg === 'string') out.encoding = arg as BufferEncoding;
  }
  return out;
}

/** Whether the answer, as its headers stand, is one to compress (its size, when known, checked by the caller). */
function worthCompressing(res: ServerResponse): boolean {
  // Headers already written out (writeHead) can no longer say the answer is compressed.
  if (res.headersSent) return false;
  if (res.statusCode < 200 || res.statusCode === 204 || res.statusCode === 304) return false;
  if (res.getHeader('Content-Encoding') !== undefined) return false;
  if (res.getHeader('Set-Cookie') !== undefined) return false;
  if (/\bno-transform\b/i.test(String(res.getHeader('Cache-Control') ?? ''))) return false;
  return compressibleType(res.getHeader('Content-Type')?.toString());
}

/** The headers of a compressed answer: its encoding, and no length (unless known). */
function markCompressed(res: ServerResponse, encoding: Encoding, length: number | undefined): void {
  res.setHeader('Content-Encoding', encoding);
  if (length === undefined) res.removeHeader('Content-Length');
  else res.setHeader('Content-Length', length);
  // The ETag stays as it is: the handlers that set one compare If-None-Match with it as written, and
  // Vary: Accept-Encoding keeps caches from mixing up the two encodings.
}

function addVary(res: ServerResponse): void {
  const vary = String(res.getHeader('Vary') ?? '');
  if (!/\baccept-encoding\b/i.test(vary) && vary.trim() !== '*') {
    res.setHeader('Vary', vary.trim() === '' ? 'Accept-Encoding' : `${vary}, Accept-Encoding`);
  }
}

export interface CompressionOptions {
  /** Path prefixes whose answers are never compressed (pages that carry a secret, such as a CSRF token). */
  except: readonly string[];
}

/**
 * The middleware. Answers of every kind say `Vary: Accept-Encoding` when they could have been
 * compressed (GET, outside `except`), so caches keep the two apart.
 */
export function compression(options: CompressionOptions): RequestHandler {
  return (req, res, next) => {
    if (req.method !== 'GET' || options.except.some((prefix) => req.path.startsWith(prefix))) {
      next();
      return;
    }
    addVary(res);
    const encoding = negotiateEncoding(req.headers['accept-encoding']);
    if (encoding !== undefined) compressResponse(req, res, encoding);
    next();
  };
}

/** Replaces the response's write and end with ones that compress, once the answer turns out to be worth it. */
function compressResponse(_req: IncomingMessage, res: ServerResponse, encoding: Encoding): void {
  const write = res.write.bind(res) as (chunk: Chunk, callback?: WriteCallback) => boolean;
  const end = res.end.bind(res) as (chunk?: Chunk, callback?: () => void) => ServerResponse;
  /** undefined until the first write or end decides; then the zlib stream, or null for "as it is". */
  let stream: BrotliCompress | Gzip | null | undefined;
  /** The connection refused a compressed chunk: zlib's output waits for its 'drain'. */
  let connectionFull = false;
  /** A write returned false: the writer waits for a 'drain' this owes it. */
  let drainOwed = false;
  let emittingDrain = false;
  /** Input given to Brotli since its last flush. */
  let unflushed = 0;

  const owedDrain = (): void => {
    if (!drainOwed || connectionFull || stream?.writableNeedDrain === true) return;
    drainOwed = false;
    emittingDrain = true;
    try {
      res.emit('drain');
      // (compressedEmit lets this one through to the writer.)
    } finally {
      emittingDrain = false;
    }
  };

  const startStream = (): BrotliCompress | Gzip => {
    const z = compressor(encoding);
    markCompressed(res, encoding, undefined);
    z.on('data', (out: Buffer) => {
      if (!write(out)) {
        connectionFull = true;
        z.pause();
      }
    });
    z.on('drain', owedDrain);
    z.on('end', () => end());
    z.on('error', (err) => res.destroy(err));
    // The connection's own 'drain' goes to zlib's output, not to the writer: told that the
    // connection has room while zlib is still behind, the writer would hand zlib a chunk for each
    // 16 KB the connection takes, and zlib's input would pile up. The writer hears 'drain' only
    // from owedDrain, once both have room.
    const emit = res.emit.bind(res) as (event: string | symbol, ...args: unknown[]) => boolean;
    res.emit = function compressedEmit(event: string | symbol, ...args: unknown[]): boolean {
      if (event !== 'drain' || emittingDrain) return emit(event, ...args);
      connectionFull = false;
      z.resume();
      owedDrain();
      return true;
    } as ServerResponse['emit'];
    res.once('close', () => {
      if (!z.destroyed) z.destroy();
    });
    return z;
  };

  res.write = function compressedWrite(chunk: Chunk, ...args: unknown[]): boolean {
    const { encoding: textEncoding, callback } = splitArgs(args);
    if (stream === undefined) {
      const length = Number(res.getHeader('Content-Length'));
      stream = worthCompressing(res) && !(Number.isFinite(length) && length < MIN_BYTES) ? startStream() : null;
    }
    if (stream === null) return (write as (c: Chunk, ...rest: unknown[]) => boolean)(chunk, ...args);
    const buffer = asBuffer(chunk, textEncoding) ?? Buffer.alloc(0);
    const accepted = stream.write(buffer, callback);
    if (encoding === 'br') {
      unflushed += buffer.length;
      if (unflushed >= BROTLI_FLUSH_BYTES) {
        unflushed = 0;
        stream.flush();
      }
    }
    if (!accepted || connectionFull) {
      drainOwed = true;
      return false;
    }
    return true;
  } as ServerResponse['write'];

  res.end = function compressedEnd(chunk?: Chunk | (() => void), ...args: unknown[]): ServerResponse {
    if (typeof chunk === 'function') return compressedEnd.call(res, undefined, chunk);
    const { encoding: textEncoding, callback } = splitArgs(args);
    const body = asBuffer(chunk, textEncoding);
    if (stream === undefined) {
      // The whole answer at once: its size is known.
      const size = body?.length ?? 0;
      if (!worthCompressing(res) || size < MIN_BYTES) {
        stream = null;
      } else if (size <= WHOLE_SYNC_BYTES && body !== undefined) {
        stream = null;
        const compressed = compressWhole(body, encoding);
        markCompressed(res, encoding, compressed.length);
        return end(compressed, callback);
      } else {
        stream = startStream();
      }
    }
    if (stream === null) return (end as (c?: Chunk, ...rest: unknown[]) => ServerResponse)(chunk, ...args);
    if (callback !== undefined) res.once('finish', callback);
    if (body === undefined) stream.end();
    else stream.end(body);
    return res;
  } as ServerResponse['end'];
}
