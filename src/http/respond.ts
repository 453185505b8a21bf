/**
 * The one way routes answer: a value or a streamed envelope, rendered in the negotiated format.
 * Routes never pick content types or serialise themselves.
 */
import type { Request, Response } from 'express';
import { checkJsonpCallback, renderEnvelopeStream, renderValue, type EnvelopeHead, type RenderContext } from '../render/index.js';
import { isPageForm } from '../render/html-forms.js';
import { requestUrl } from './base-url.js';

export interface RespondOptions {
  /** Application title for the browsable page. */
  title: string;
  /** Methods shown in the page header (Allow). */
  allow?: string[];
  /** How long a client may take nothing of a streamed envelope before it is aborted (STREAM_SEND_TIMEOUT_S). */
  sendTimeoutMs?: number;
}

/** Settings-derived options, attached by the app so routes don't have to pass them. */
export function pageOptions(res: Response): RespondOptions {
  return (res.locals.pageOptions as RespondOptions | undefined) ?? { title: 'Cybercommons' };
}

function breadcrumbs(path: string): { name: string; href: string }[] {
  const parts = path.split('/').filter((p) => p.length > 0);
  const crumbs: { name: string; href: string }[] = [];
  let href = '';
  for (const [i, part] of parts.entries()) {
    href += `/${part}`;
    if (i === 0) {
      crumbs.push({ name: 'Api Root', href: `${href}/` });
      continue;
    }
    if (part === 'data' && i === 2) {
      // /api/data_store/data/ is one level, "Data store", and its crumb links there.
      const section = crumbs.at(-1);
      if (section !== undefined) section.href = `${href}/`;
      continue;
    }
    let name: string;
    try {
      name = decodeURIComponent(part);
    } catch {
      name = part;
    }
    // API sections get readable names; database, collection, record and task names are data,
    // shown exactly as they are.
    const readable = i <= 2 ? name.replace(/_/g, ' ').replace(/^\w/, (c) => c.toUpperCase()) : name;
    crumbs.push({ name: readable, href: `${href}/` });
  }
  return crumbs;
}

const CSV_FIELDS_LOCAL = 'csvFields';
const RELATED_LOCAL = 'relatedPages';

/** Other pages about the resource, linked from its browsable page (see PageContext.related). */
export function setRelatedPages(res: Response, pages: readonly { name: string; href: string }[]): void {
  res.locals[RELATED_LOCAL] = pages;
}

/** The CSV columns a route chose from its `fields` parameter (see render/csv.ts). */
export function setCsvFields(res: Response, fields: readonly string[]): void {
  res.locals[CSV_FIELDS_LOCAL] = fields;
}

function jsonpCallback(req: Request): string | undefined {
  if (req.format !== 'jsonp') return undefined;
  try {
    return checkJsonpCallback(req.query.callback);
  } catch (err) {
    req.format = 'json'; // the error itself must not go out as a script with that callback
    throw err;
  }
}

export function pageContext(req: Request, res: Response): RenderContext {
  // What a signed-in caller receives is theirs: no shared or browser cache may keep it.
  if (req.principal?.username && !res.headersSent && !res.hasHeader('Cache-Control')) res.setHeader('Cache-Control', 'no-store');
  const opts = pageOptions(res);
  // The request's URL and the breadcrumbs only appear on the browsable page: worked out when it
  // reads them, not for every JSON answer.
  let url: string | undefined;
  let crumbs: RenderContext['breadcrumbs'] | undefined;
  // baseUrl + path: the full path, also inside routers mounted below /api (read now: express
  // changes baseUrl as a request leaves a router).
  const path = req.baseUrl + req.path;
  const ctx: RenderContext = {
    title: opts.title,
    get requestUrl() {
      return (url ??= requestUrl(req).toString());
    },
    get breadcrumbs() {
      return (crumbs ??= breadcrumbs(path));
    },
    user: req.principal?.username ? { username: req.principal.username } : null,
    method: req.method,
    cspNonce: res.locals.cspNonce as string | undefined,
  };
  if (isPageForm(res.locals.form)) ctx.form = res.locals.form;
  const fields = res.locals[CSV_FIELDS_LOCAL] as readonly string[] | undefined;
  if (fields !== undefined) ctx.fields = fields;
  const related = res.locals[RELATED_LOCAL] as RenderContext['related'];
  if (related !== undefined) ctx.related = related;
  const allow = (res.locals.allow as string[] | undefined) ?? opts.allow;
  if (allow !== undefined) ctx.allow = allow;
  const callback = jsonpCallback(req);
  if (callback !== undefined) ctx.callback = callback;
  return ctx;
}

/**
 * The context of a JSON answer, the most common one: the JSON writer reads nothing of it (no
 * page around the value, no callback, no columns), so it is not worked out per request. Its
 * `no-store` comes with the security headers of every machine answer (security-headers.ts).
 */
const JSON_CONTEXT: RenderContext = Object.freeze({ title: '', requestUrl: '', breadcrumbs: [], user: null, method: '' });

function contextFor(req: Request, res: Response): RenderContext {
  return req.format === 'json' ? JSON_CONTEXT : pageContext(req, res);
}

export function respond(req: Request, res: Response, status: number, value: unknown): void {
  renderValue(res, req.format, status, value, contextFor(req, res));
}

export async function respondEnvelope(req: Request, res: Response, head: EnvelopeHead, records: AsyncIterable<unknown>): Promise<void> {
  await renderEnvelopeStream(res, req.format, head, records, contextFor(req, res), pageOptions(res).sendTimeoutMs);
}

/** Small helper for envelopes that are already in memory (database lists etc.). */
export async function* fromArray<T>(items: readonly T[]): AsyncIterable<T> {
  yield* items;
}
