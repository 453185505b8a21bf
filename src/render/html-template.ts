/**
 * HTML written with a tagged template that escapes: in html`<td>${value}</td>` every
 * interpolated value is escaped for text and for quoted attribute values (& < > " '), unless it
 * is itself HTML: the result of another html`…`, or a string explicitly marked by raw(…). Raw
 * HTML is thus the marked exception, and a value that forgot its escaping cannot happen.
 *
 * Values: strings and numbers are written escaped; undefined, null and false write nothing
 * (for `${cond && html`…`}`); arrays write each item in turn, with nothing between.
 *
 * Whitespace in these templates is output: Prettier is told not to format embedded languages
 * (.prettierrc.json), as it would reflow the HTML of html`…` templates.
 */
import escapeHtml from 'escape-html';

/** HTML safe to write as is: made by html`…` from escaped values, or marked by raw(…). */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

export type HtmlValue = string | number | boolean | null | undefined | Html | readonly HtmlValue[];

function write(value: HtmlValue): string {
  if (value instanceof Html) return value.text;
  if (value === undefined || value === null || value === false) return '';
  if (Array.isArray(value)) return (value as readonly HtmlValue[]).map(write).join('');
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): Html {
  let out = strings[0] ?? '';
  for (let i = 0; i < values.length; i++) out += write(values[i]) + (strings[i + 1] ?? '');
  return new Html(out);
}

/** Text already HTML (made by code that escapes it, or a constant), written as is: the marked exception. */
export const raw = (text: string): Html => new Html(text);

/** Items joined by a separator (itself HTML), each escaped unless it is HTML. */
export const joinHtml = (items: readonly HtmlValue[], separator: Html | string = ''): Html =>
  new Html(items.map(write).join(separator instanceof Html ? separator.text : escapeHtml(separator)));
