import { doubleText } from './double-text.js';
import { html, raw, type Html } from './html-template.js';
import { IntegralDouble, type PlainValue } from './types.js';

/**
 * JSON pretty-printed exactly like JSON.stringify(value, null, 4) (DRF's indent), but as HTML for
 * a <pre>: every token is HTML-escaped (written by the escaping template), tokens are wrapped in
 * spans for colouring, and string values that are absolute http(s) URLs become links. Removing
 * the tags and unescaping the entities gives back JSON.stringify(value, null, 4) character for
 * character, except that a whole double is `3.0` (see IntegralDouble).
 */

const INDENT = '    ';

/** Long enough for any real link; longer strings are shown as text. */
const MAX_LINK_LENGTH = 2048;

/**
 * Only plain http(s) URLs without whitespace, controls, quotes, angle brackets, backslashes or
 * backticks are linked: anything odd stays text, even though the href would be escaped anyway.
 */
const LINKABLE = /^https?:\/\/[^\s\u0000-\u001F\u007F-\u009F"'<>\\`]+$/i;

export function isLinkableUrl(text: string): boolean {
  if (text.length > MAX_LINK_LENGTH || !LINKABLE.test(text)) return false;
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

export function indentation(depth: number): string {
  return INDENT.repeat(depth);
}

/** An object key with its quotes, as `"key"`. */
export function keyHtml(key: string): Html {
  return html`<span class="k">${JSON.stringify(key)}</span>`;
}

function stringHtml(text: string): Html {
  const json = JSON.stringify(text);
  if (!isLinkableUrl(text)) return html`<span class="s">${json}</span>`;
  // The quotes stay outside the link, as in DRF's urlize_quoted_links; the link text is the
  // JSON-escaped form so the <pre> still reads as valid JSON.
  return html`<span class="s">&quot;<a href="${text}" rel="nofollow">${json.slice(1, -1)}</a>&quot;</span>`;
}

const NULL_HTML = html`<span class="l">null</span>`;

/** `value` pretty-printed as HTML, for a position `depth` levels deep (affects inner indentation). */
export function prettyJsonHtml(value: PlainValue, depth = 0): Html {
  const parts: string[] = [];
  write(value, depth, parts);
  // Each part is the text of a token made by html`…` or the layout's own punctuation and spaces
  // (no character to escape): joined as strings, as a page of records has many thousands.
  return raw(parts.join(''));
}

/** Appends the value's tokens to parts. */
function write(value: PlainValue, depth: number, parts: string[]): void {
  if (value === null) {
    parts.push(NULL_HTML.text);
    return;
  }
  switch (typeof value) {
    case 'string':
      parts.push(stringHtml(value).text);
      return;
    case 'number':
    case 'boolean':
      parts.push(html`<span class="l">${JSON.stringify(value)}</span>`.text);
      return;
  }
  if (value instanceof IntegralDouble) {
    parts.push(html`<span class="l">${doubleText(value.value)}</span>`.text);
    return;
  }
  const inner = `\n${indentation(depth + 1)}`;
  if (Array.isArray(value)) {
    if (value.length === 0) {
      parts.push('[]');
      return;
    }
    parts.push('[');
    value.forEach((item, index) => {
      parts.push(index === 0 ? inner : `,${inner}`);
      write(item, depth + 1, parts);
    });
    parts.push(`\n${indentation(depth)}]`);
    return;
  }
  const keys = Object.keys(value);
  if (keys.length === 0) {
    parts.push('{}');
    return;
  }
  parts.push('{');
  keys.forEach((key, index) => {
    parts.push(index === 0 ? inner : `,${inner}`, keyHtml(key).text, ': ');
    write(value[key] as PlainValue, depth + 1, parts);
  });
  parts.push(`\n${indentation(depth)}}`);
}
