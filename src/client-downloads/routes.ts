/**
 * The researchers' Python client, served by the service itself so any lab machine can install it
 * (CLIENT_ROUTES below; the app's route table mounts them at /api/client):
 *   GET python/                         where the wheel is and how to install it (JSON)
 *   GET python/<wheel file>             the wheel (no credentials needed)
 *   GET python/simple/[cybercom/]       a PEP 503 index page, for pip --index-url
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
import { COMMON, ok } from '../http/openapi-parts.js';
import { pathOf, route, serve } from '../http/route-table.js';
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

const tags = ['client'];
/** Anyone may download the client: the wheel holds no secret. */
const security = [{}];
const HTML = { 'text/html': { schema: { type: 'string' } } };

export const CLIENT_ROUTES = {
  description: route('/python/', {
    GET: {
      tags,
      security,
      summary: 'The Python client: current wheel URL, version, SHA-256 and install line (404 client_not_built before it is built)',
      parameters: COMMON,
      responses: { 200: ok('Wheel description'), 404: ok('Not built on this server') },
    },
  }),
  index: route('/python/simple/', {
    GET: {
      tags,
      security,
      summary: 'A PEP 503 index of the client, for pip --index-url',
      responses: { 200: { description: 'Index page', content: HTML }, 404: ok('Not built on this server') },
    },
  }),
  project: route('/python/simple/:project/', {
    GET: {
      tags,
      security,
      summary: "The PEP 503 page of the client's project (cybercom), linking its wheel with its SHA-256",
      responses: { 200: { description: 'Project page', content: HTML }, 404: ok('No such project, or not built on this server') },
    },
  }),
  wheel: route(
    '/python/:file',
    {
      GET: {
        tags,
        security,
        summary: 'The wheel file (application/zip)',
        responses: { 200: { description: 'The wheel', content: { 'application/zip': {} } }, 404: ok('No such file') },
      },
    },
    { file: 'wheel' },
  ),
};

/**
 * `downloadsDir` is CLIENT_DOWNLOADS_DIR; the wheels are in its `python/` folder. `mountPath` is
 * where the app mounts the router (its route table), for the links the description carries.
 */
export function clientDownloadsRouter(downloadsDir: string, mountPath: string): Router {
  const dir = join(downloadsDir, 'python');
  const router = Router();
  const wheelOrThrow = async (): Promise<Wheel> => {
    const wheel = await currentWheel(dir);
    if (wheel === undefined) throw notBuilt();
    return wheel;
  };

  serve(router, CLIENT_ROUTES.description, {
    GET: async (req: Request, res: Response) => {
      const wheel = await wheelOrThrow();
      const url = absoluteUrl(req, mountPath + pathOf(CLIENT_ROUTES.wheel, { file: wheel.file }));
      respond(req, res, 200, {
        package: PACKAGE,
        version: wheel.version,
        wheel: url,
        sha256: wheel.sha256,
        size: wheel.size,
        index_url: absoluteUrl(req, mountPath + pathOf(CLIENT_ROUTES.index)),
        install: `pip install ${url}`,
      });
    },
  });
  serve(router, CLIENT_ROUTES.index, {
    GET: async (_req, res) => {
      await wheelOrThrow();
      sendHtml(res, 'Simple index', [`<a href="${PACKAGE}/">${PACKAGE}</a>`]);
    },
  });
  serve(router, CLIENT_ROUTES.project, {
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
  });
  serve(router, CLIENT_ROUTES.wheel, {
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
  });
  return router;
}
