/**
 * Files the service serves itself (scripts and stylesheets of its pages, no CDN), under a mount
 * of their own. Pages load each under a name holding a hash of its content (`map.<hash>.js`),
 * cached for good (`immutable`): a new version has a new name, so it is picked up at once, and
 * an unchanged one is never asked for again. The plain names are still served, revalidated by
 * ETag (for pages made before a restart, and for tools). Each file is read once per process,
 * when first asked for, and sent compressed (Brotli or gzip, at their best ratio, compressed
 * once per process) to clients that take it.
 */
import { createHash } from 'node:crypto';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { Router, type Request, type Response } from 'express';
import { negotiateEncoding, type Encoding } from './compression.js';

export interface StaticFile {
  /** The Content-Type header. */
  type: string;
  /** The file's text, asked for once. */
  body: () => string;
}

export const JAVASCRIPT = 'application/javascript; charset=utf-8';
export const STYLESHEET = 'text/css; charset=utf-8';

/** A file read once: its bytes, their hash, and its compressed forms (made once, at the best ratio). */
interface LoadedFile {
  type: string;
  body: Buffer;
  /** 12 characters of the body's SHA-256, in the file's hashed name. */
  hash: string;
  etag: string;
  encoded: Partial<Record<Encoding, Buffer>>;
}

/** A year: what `immutable` caches keep a hashed file for (its content never changes under that name). */
const IMMUTABLE = 'public, max-age=31536000, immutable';

/** The file's bytes in an encoding, compressed on first use at the highest setting (once per process). */
function encodedBody(file: LoadedFile, encoding: Encoding): Buffer {
  let body = file.encoded[encoding];
  if (body === undefined) {
    body =
      encoding === 'br'
        ? brotliCompressSync(file.body, {
            params: {
              [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY,
              [constants.BROTLI_PARAM_SIZE_HINT]: file.body.length,
            },
          })
        : gzipSync(file.body, { level: constants.Z_BEST_COMPRESSION });
    file.encoded[encoding] = body;
  }
  return body;
}

/** The files served under one mount, by their plain and their content-hashed names. */
export class StaticFiles<Name extends string> {
  private readonly loaded = new Map<Name, LoadedFile>();

  /** root: the mount's path (`/api/static`); names: each with an extension (`browsable.js`). */
  constructor(
    private readonly root: string,
    private readonly files: Readonly<Record<Name, StaticFile>>,
  ) {}

  /** The names served, each also under its content-hashed name. */
  get names(): Name[] {
    return Object.keys(this.files) as Name[];
  }

  private load(name: Name): LoadedFile {
    let file = this.loaded.get(name);
    if (file === undefined) {
      const body = Buffer.from(this.files[name].body(), 'utf8');
      const digest = createHash('sha256').update(body).digest('base64url');
      const hash = digest.slice(0, 12).replace(/[-_]/g, '0');
      file = { type: this.files[name].type, body, hash, etag: `"${digest.slice(0, 27)}"`, encoded: {} };
      this.loaded.set(name, file);
    }
    return file;
  }

  /** The path pages load a file from: `<root>/name.<hash>.ext`, new whenever its content changes, cached by browsers for good. */
  path(name: Name): string {
    const dot = name.lastIndexOf('.');
    return `${this.root}/${name.slice(0, dot)}.${this.load(name).hash}${name.slice(dot)}`;
  }

  /** The file a request names: by its hashed name (current content only) or, revalidated each time, by its plain name. */
  private requested(name: string): { file: LoadedFile; hashed: boolean } | undefined {
    if (Object.hasOwn(this.files, name)) return { file: this.load(name as Name), hashed: false };
    const match = /^(.+)\.([A-Za-z0-9]{12})(\.[a-z]+)$/.exec(name);
    if (match === null) return undefined;
    const plain = `${match[1]}${match[3]}`;
    if (!Object.hasOwn(this.files, plain)) return undefined;
    const file = this.load(plain as Name);
    return file.hash === match[2] ? { file, hashed: true } : undefined;
  }

  /** The router to mount at root: GET `/<name>`; any other name is left to the next handler. */
  router(): Router {
    const router = Router({ strict: true });
    router.get('/:name', (req: Request, res: Response, next) => {
      const found = this.requested(String(req.params.name));
      if (found === undefined) return next();
      const { file, hashed } = found;
      res.setHeader('Content-Type', file.type);
      res.setHeader('Cache-Control', hashed ? IMMUTABLE : 'no-cache');
      res.setHeader('Vary', 'Accept-Encoding');
      res.setHeader('ETag', file.etag);
      if (req.headers['if-none-match'] === file.etag) {
        res.status(304).end();
        return;
      }
      const encoding = negotiateEncoding(req.headers['accept-encoding']);
      if (encoding === undefined) {
        res.status(200).end(file.body);
        return;
      }
      const body = encodedBody(file, encoding);
      res.setHeader('Content-Encoding', encoding);
      res.setHeader('Content-Length', body.length);
      res.status(200).end(body);
    });
    return router;
  }
}
