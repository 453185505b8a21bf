/**
 * AdminJS renders its page shell (frontend/layout-template.js) as a string; before it is sent,
 * this makes it fit the service's rules:
 * - nothing from the internet: the Google Fonts stylesheet link (and any other absolute-URL
 *   link or script) is removed; the design system falls back to the system sans-serif font;
 * - a strict script policy: every <script> gets the request's CSP nonce, so the page runs with
 *   `script-src 'self' 'nonce-…'` and no 'unsafe-inline';
 * - no markup injection through the initial state: AdminJS writes its state as raw JSON inside
 *   an inline script, so every `<` in it is escaped to `\u003c` (the same string to JavaScript,
 *   but a `</script>` in a value can no longer end the element);
 * - the <title> is the configured application title, HTML-escaped.
 */
import escapeHtml from 'escape-html';

const STATE_START = 'window.REDUX_STATE = ';
const STATE_END = 'window.AdminJS = { Components: {} };';
const EXTERNAL_LINK = /<link\b[^>]*\bhref\s*=\s*["']?(?:https?:)?\/\/[^>]*>\s*/gi;
const EXTERNAL_SCRIPT = /<script\b[^>]*\bsrc\s*=\s*["']?(?:https?:)?\/\/[^>]*>\s*<\/script>\s*/gi;

export class LayoutError extends Error {}

export function hardenLayout(html: string, options: { nonce: string; title: string }): string {
  const start = html.indexOf(STATE_START);
  const end = html.indexOf(STATE_END, start);
  // Fail closed: if a new AdminJS version writes its state differently, nothing is sent unescaped.
  if (start === -1 || end === -1) throw new LayoutError('Unexpected AdminJS page layout: the initial state script was not found.');
  const state = html.slice(start, end).replace(/</g, '\\u003c');
  let out = html.slice(0, start) + state + html.slice(end);
  out = out.replace(EXTERNAL_LINK, '').replace(EXTERNAL_SCRIPT, '');
  const nonce = escapeHtml(options.nonce);
  out = out.replace(/<script\b/gi, `<script nonce="${nonce}"`);
  out = out.replace(/<title>[\s\S]*?<\/title>/i, `<title>${escapeHtml(options.title)}</title>`);
  return out;
}
