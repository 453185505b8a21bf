import { STATUS_CODES } from 'node:http';
import { contentTypeFor, FORMATS } from './content-types.js';
import type { DocumentWriter } from './document.js';
import { envelopeHeadEntries, RESULTS_KEY } from './envelope.js';
import { FORM_STYLE, pageFormHtml } from './html-forms.js';
import { indentation, keyHtml, prettyJsonHtml } from './html-json.js';
import { html, joinHtml, raw, type Html } from './html-template.js';
import { IntegralDouble, type EnvelopeHead, type Format, type PageContext, type PlainValue } from './types.js';
import { urls } from '../http/urls.js';

/**
 * The browsable API page (`format=api`), laid out like Django REST framework's: navbar with the
 * application title and the login state, breadcrumbs, format links, the request line, the
 * response header block and the pretty-printed value.
 *
 * Self-contained on purpose (no external CSS, JavaScript, fonts or CDN): it must work offline and
 * under a strict Content-Security-Policy. The only inline element that CSP governs is one <style>
 * carrying the request's nonce; there is no inline script and no inline event handler. Pages with
 * a form (html-forms.ts) load the one script file the API serves itself. Everything that comes
 * from data or from the request is written by the escaping template (html-template.ts).
 */

const API_ROOT = urls.root();
const LOGOUT_PATH = urls.logout();
/** The manual the service serves itself (src/manual), linked from every page's navbar. */
export const MANUAL_PATH = urls.manual();

/** A format suffix after the last slash (`/run/task/.json`) means the same as `?format=`. */
const FORMAT_SUFFIX = /\/\.(?:api|json|jsonp|xml|csv|ndjson)$/;

const STYLE = `
*{box-sizing:border-box}
body{margin:0;font-family:system-ui,-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;font-size:14px;color:#333;background:#fff}
.navbar{display:flex;justify-content:space-between;align-items:center;padding:0 20px;min-height:50px;background:#2c2c2c;border-bottom:4px solid #a30000;color:#ddd}
.navbar a{color:#fff;text-decoration:none}
.navbar .brand{font-size:18px}
.breadcrumb{list-style:none;margin:20px;padding:8px 15px;background:#f5f5f5;border-radius:4px}
.breadcrumb li{display:inline}
.breadcrumb li+li:before{content:"/\\00a0";padding:0 5px;color:#aaa}
.breadcrumb a{color:#2c6dac;text-decoration:none}
.breadcrumb .active{color:#777}
main{margin:0 20px 40px}
.page-header{display:flex;flex-wrap:wrap;justify-content:space-between;align-items:flex-end;border-bottom:1px solid #eee;margin-bottom:15px}
h1{font-size:28px;font-weight:400;margin:0 0 10px}
.formats{margin-bottom:10px}
.formats a{display:inline-block;padding:4px 10px;margin-left:4px;border:1px solid #ccc;border-radius:3px;color:#333;text-decoration:none}
.formats a.active{background:#2c6dac;color:#fff;border-color:#2c6dac}
pre{margin:0 0 15px;padding:10px;background:#f8f8f8;border:1px solid #ddd;border-radius:4px;overflow:auto;font-family:ui-monospace,Menlo,Consolas,monospace;font-size:13px;line-height:1.45;white-space:pre-wrap;word-break:break-word}
.response-info .meta{margin:0;border-bottom:0;border-radius:4px 4px 0 0}
.response-info .content{border-top:0;border-radius:0 0 4px 4px}
.k{color:#881391}.s{color:#1a1aa6}.l{color:#098658}.s a{color:inherit}
.error{color:#a30000;font-weight:bold}
${FORM_STYLE}`;

/**
 * Links taken from the context are only emitted when they are site-relative paths or absolute
 * http(s) URLs; anything else (a `javascript:` URL, `//evil.example`) is shown as plain text.
 */
export function safeHref(href: string): string | null {
  if (/^\/(?![/\\])/.test(href)) return href;
  try {
    const url = new URL(href);
    return url.protocol === 'http:' || url.protocol === 'https:' ? href : null;
  } catch {
    return null;
  }
}

/** Path and query of the request URL as the client sent them (for the request line and `next`). */
function pathAndQuery(requestUrl: string): string {
  try {
    const url = new URL(requestUrl);
    return url.pathname + url.search;
  } catch {
    return requestUrl;
  }
}

/** Link to the same resource in another format, keeping every other query parameter. */
export function formatHref(requestUrl: string, format: Format): string {
  let url: URL;
  try {
    url = new URL(requestUrl);
  } catch {
    return `?format=${format}`;
  }
  // A path suffix would contradict the new ?format=, so it goes.
  url.pathname = url.pathname.replace(FORMAT_SUFFIX, '/');
  url.searchParams.set('format', format);
  return url.pathname + url.search;
}

/** A link, or its text alone when there is no (safe) href; `attributes` are the page's own markup. */
function link(href: string | null, text: string, attributes: Html = html``): Html {
  if (href === null) return html`<span${attributes}>${text}</span>`;
  return html`<a href="${href}"${attributes}>${text}</a>`;
}

function navbar(ctx: PageContext): Html {
  const account = ctx.user
    ? html`${ctx.user.username} · ${link(LOGOUT_PATH, 'Log out')}`
    : link(urls.login(pathAndQuery(ctx.requestUrl)), 'Log in');
  const manual = link(MANUAL_PATH, 'Manual', html` class="manual"`);
  return html`<header class="navbar">${link(API_ROOT, ctx.title, html` class="brand"`)}<span class="account">${manual} · ${account}</span></header>
`;
}

function breadcrumbs(ctx: PageContext): Html {
  const items = ctx.breadcrumbs.map((crumb, index) => {
    const last = index === ctx.breadcrumbs.length - 1;
    return html`<li${last && html` class="active"`}>${link(safeHref(crumb.href), crumb.name)}</li>`;
  });
  return html`<nav aria-label="breadcrumb"><ul class="breadcrumb">${items}</ul></nav>
`;
}

function formatLinks(ctx: PageContext): Html {
  const links = FORMATS.map((format) =>
    link(formatHref(ctx.requestUrl, format), format, format === 'api' ? html` class="active" rel="nofollow"` : html` rel="nofollow"`),
  );
  return html`<div class="formats">Format: ${links}</div>`;
}

function relatedLinks(ctx: PageContext): Html | undefined {
  const links = (ctx.related ?? []).map((page) => link(safeHref(page.href), page.name, html` class="related"`));
  return links.length === 0 ? undefined : html`<div class="formats">${links}</div>`;
}

function headerBlock(status: number, ctx: PageContext): Html {
  const lines = [html`<b>HTTP ${status} ${STATUS_CODES[status] ?? ''}</b>`];
  if (ctx.allow && ctx.allow.length > 0) lines.push(html`<b>Allow:</b> ${ctx.allow.join(', ')}`);
  // Like DRF: the header block describes the data's own representation, which is JSON.
  lines.push(html`<b>Content-Type:</b> ${contentTypeFor('json')}`);
  return html`<pre class="meta">${joinHtml(lines, '\n')}</pre>`;
}

/** Previous / next links of an envelope, from its own (absolute, same-site) URLs. */
function pagingNav(head: EnvelopeHead | null): Html | undefined {
  if (head === null || (head.next === null && head.previous === null)) return undefined;
  const step = (href: string | null, text: string, rel: string) => {
    const safe = href === null ? null : safeHref(href);
    return safe === null ? html`<span class="disabled">${text}</span>` : html`<a href="${safe}" rel="${rel}">${text}</a>`;
  };
  const position = html`<span class="position">Page ${head.meta.page} of ${head.meta.pages} (${head.count} in all)</span>`;
  return html`<nav class="paging" aria-label="pages">${step(head.previous, '« Previous', 'prev')}${position}${step(head.next, 'Next »', 'next')}</nav>
`;
}

/** The envelope head when a whole value is an envelope (lists answered in one piece). */
function envelopeHeadOf(value: PlainValue): EnvelopeHead | null {
  if (value === null || typeof value !== 'object' || Array.isArray(value) || value instanceof IntegralDouble) return null;
  const { count, meta, next, previous, results } = value;
  if (typeof count !== 'number' || !Array.isArray(results) || meta === null || typeof meta !== 'object' || Array.isArray(meta)) return null;
  if (meta instanceof IntegralDouble) return null;
  const { page, page_size, pages } = meta;
  if (typeof page !== 'number' || typeof page_size !== 'number' || typeof pages !== 'number') return null;
  if ((next !== null && typeof next !== 'string') || (previous !== null && typeof previous !== 'string')) return null;
  return { count, meta: { page, page_size, pages }, next: next ?? null, previous: previous ?? null };
}

/** Forms belong to pages that show a resource, not to error pages or answers to writes. */
function formFor(status: number, ctx: PageContext): Html | undefined {
  if (status >= 400 || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) return undefined;
  return pageFormHtml(ctx.form, ctx.user !== null, ctx.cspNonce);
}

/** The page's stylesheet: a constant of this module, not data. */
const STYLE_HTML = raw(STYLE);

/**
 * The start of the browsable API's and the explorer's pages, up to each page's own head elements:
 * the same doctype, language, viewport and robots rule (none of them belongs in a search index).
 */
export const DOCUMENT_START = raw(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="NONE,NOARCHIVE">
`);

/** Everything before the pretty-printed value (which goes inside `<pre class="content">`). */
function pageOpen(status: number, ctx: PageContext, head: EnvelopeHead | null): Html {
  const heading = ctx.breadcrumbs.at(-1)?.name ?? ctx.title;
  return html`${DOCUMENT_START}<title>${heading === ctx.title ? ctx.title : `${heading} – ${ctx.title}`}</title>
<style${ctx.cspNonce && html` nonce="${ctx.cspNonce}"`}>${STYLE_HTML}</style>
</head>
<body>
${navbar(ctx)}${breadcrumbs(ctx)}<main>
<div class="page-header"><h1>${heading}</h1>${relatedLinks(ctx)}${formatLinks(ctx)}</div>
<div class="request-info"><pre class="request"><b>${ctx.method}</b> ${pathAndQuery(ctx.requestUrl)}</pre></div>
${pagingNav(head)}<div class="response-info">${headerBlock(status, ctx)}<pre class="content">`;
}

const pageClose = (form: Html | undefined): Html => html`</pre></div>
${form}</main>
</body>
</html>
`;

/** The page for one response; `status` is shown in the header block. */
export function htmlDocument(status: number, ctx: PageContext): DocumentWriter {
  const close = pageClose(formFor(status, ctx));
  const memberIndent = `\n${indentation(1)}`;
  return {
    whole: (value) => html`${pageOpen(status, ctx, envelopeHeadOf(value))}${prettyJsonHtml(value, 0)}${close}`.text,

    // These pieces reproduce prettyJsonHtml's layout of {count, meta, next, previous, results}.
    envelopeOpen: (head) => {
      const members = envelopeHeadEntries(head).map(([key, value]) => html`${memberIndent}${keyHtml(key)}: ${prettyJsonHtml(value, 1)},`);
      return html`${pageOpen(status, ctx, head)}{${members}${memberIndent}${keyHtml(RESULTS_KEY)}: [`.text;
    },

    envelopeRecord: (record, index) =>
      html`${index !== 0 && ','}
${indentation(2)}${prettyJsonHtml(record, 2)}`.text,

    // An empty array prints as "[]", a non-empty one closes on its own line.
    envelopeClose: (recordCount) =>
      html`${recordCount !== 0 && memberIndent}]
}${close}`.text,

    // Left unclosed on purpose: the page must not look like a complete response.
    abortNotice: html`</pre>
<p class="error">The server hit an error while sending this response; what is shown above is incomplete.</p>
`.text,
  };
}
