/**
 * The researchers' Python client, served by the service itself so any lab machine can install it:
 *   GET /api/client/python/                         where the wheel is and how to install it (JSON)
 *   GET /api/client/python/<wheel file>             the wheel (no credentials needed)
 *   GET /api/client/python/simple/[cybercom/]       a PEP 503 index page, for pip --index-url
 * The wheel is built outside the request path (test/support/python-client.sh, run by the test
 * preparation; `pip wheel clients/python` by hand) into CLIENT_DOWNLOADS_DIR. Without one every
 * route answers 404 `client_not_built` saying how to build it. Mounted before the trailing-slash
 * redirect: pip takes a file's name from its URL, which must end in `.whl`.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Router, type Request, type Response } from 'express';
import escapeHtml from 'escape-html';
import { notFound } from '../errors.js';
import { absoluteUrl } from '../http/base-url.js';
import { methods } from '../http/methods.js';
import { respond } from '../http/respond.js';

const PACKAGE = 'cybercom';
/** Only pure-Python wheels of this package; anything else in the directory is not served. */
const WHEEL = /^cybercom-(\d[A-Za-z0-9.+]*)-py3-none-any\.whl$/;

interface Wheel {
  file: string;
  version: string;
  path: string;
  size: number;
  sha256: string;
}

const notBuilt = () =>
  notFound(
    'The Python client has not been built on this server. Build it with `bash test/support/python-client.sh` ' +
      '(or `pip wheel --no-deps -w <CLIENT_DOWNLOADS_DIR>/python clients/python`).',
    'client_not_built',
  );

/** Digests by file, path and modification time, so a rebuilt wheel is hashed again. */
const digests = new Map<string, string>();

async function sha256Of(path: string, mtimeMs: number): Promise<string> {
  const key = `${path}:${mtimeMs}`;
  const known = digests.get(key);
  if (known !== undefined) return known;
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  const digest = hash.digest('hex');
  digests.set(key, digest);
  return digest;
}

/** The newest wheel in the directory (by version, numerically), or undefined. */
async function currentWheel(dir: string): Promise<Wheel | undefined> {
  let files: string[];
  try {
    files = await readdir(dir);
  } catch {
    return undefined;
  }
  const wheels = files.flatMap((file) => {
    const match = WHEEL.exec(file);
    return match ? [{ file, version: match[1] as string }] : [];
  });
  wheels.sort((a, b) => a.version.localeCompare(b.version, 'en', { numeric: true }));
  const newest = wheels.at(-1);
  if (newest === undefined) return undefined;
  const path = join(dir, newest.file);
  const info = await stat(path);
  return { ...newest, path, size: info.size, sha256: await sha256Of(path, info.mtimeMs) };
}

function sendHtml(res: Response, title: string, links: string[]): void {
  res
    .status(200)
    .type('text/html; charset=utf-8')
    .send(`<!DOCTYPE html>\n<html><head><title>${escapeHtml(title)}</title></head><body>\n${links.join('<br>\n')}\n</body></html>\n`);
}

/** `downloadsDir` is CLIENT_DOWNLOADS_DIR; the wheels are in its `python/` folder. */
export function clientDownloadsRouter(downloadsDir: string): Router {
  const dir = join(downloadsDir, 'python');
  const router = Router();
  const wheelOrThrow = async (): Promise<Wheel> => {
    const wheel = await currentWheel(dir);
    if (wheel === undefined) throw notBuilt();
    return wheel;
  };

  router.all(
    '/python/',
    methods({
      GET: async (req: Request, res: Response) => {
        const wheel = await wheelOrThrow();
        const url = absoluteUrl(req, `/api/client/python/${wheel.file}`);
        respond(req, res, 200, {
          package: PACKAGE,
          version: wheel.version,
          wheel: url,
          sha256: wheel.sha256,
          size: wheel.size,
          index_url: absoluteUrl(req, '/api/client/python/simple/'),
          install: `pip install ${url}`,
        });
      },
    }),
  );
  router.all(
    '/python/simple/',
    methods({
      GET: async (_req, res) => {
        await wheelOrThrow();
        sendHtml(res, 'Simple index', [`<a href="${PACKAGE}/">${PACKAGE}</a>`]);
      },
    }),
  );
  router.all(
    '/python/simple/:project/',
    methods({
      GET: async (req, res) => {
        // PEP 503 normalised names: cybercom is its own normal form.
        if (
          String(req.params.project)
            .toLowerCase()
            .replace(/[-_.]+/g, '-') !== PACKAGE
        ) {
          throw notFound(`No project "${String(req.params.project)}" here; this index serves "${PACKAGE}".`, 'no_such_project');
        }
        const wheel = await wheelOrThrow();
        sendHtml(res, `Links for ${PACKAGE}`, [
          `<a href="../../${escapeHtml(wheel.file)}#sha256=${wheel.sha256}" data-requires-python="&gt;=3.9">${escapeHtml(wheel.file)}</a>`,
        ]);
      },
    }),
  );
  router.all(
    '/python/:file',
    methods({
      GET: async (req, res) => {
        const wheel = await wheelOrThrow();
        if (req.params.file !== wheel.file) {
          throw notFound(`No file "${String(req.params.file)}"; the current client is ${wheel.file}.`, 'no_such_file');
        }
        res.status(200);
        res.setHeader('Content-Type', 'application/zip');
        res.setHeader('Content-Length', String(wheel.size));
        res.setHeader('Content-Disposition', `attachment; filename="${wheel.file}"`);
        if (req.method === 'HEAD') {
          res.end();
          return;
        }
        await new Promise<void>((resolve, reject) => {
          const stream = createReadStream(wheel.path);
          stream.on('error', reject);
          res.on('close', resolve);
          stream.pipe(res);
        });
      },
    }),
  );
  return router;
}
