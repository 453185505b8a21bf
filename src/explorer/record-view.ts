/** One record whole, as JSON, with a link back to its collection's table. */
import { prettyJsonHtml } from '../render/html-json.js';
import { html, type Html } from '../render/html-template.js';
import { toPlainValue } from '../render/plain-value.js';
import { a } from './view-html.js';

/** `record`: decoded, or still in its bytes (a BsonRecord); rendered as every format renders it. */
export function recordView(base: string, apiPath: string, record: unknown): Html {
  let json: Html;
  try {
    // Highlighted JSON, written by prettyJsonHtml with the escaping template.
    json = prettyJsonHtml(toPlainValue(record));
  } catch {
    json = html`(this record nests too deeply to show)`;
  }
  return html`<p>${a(base, '« Back to the table')} · ${a(apiPath, 'in the browsable API')}</p>\n<pre data-testid="record-json">${json}</pre>\n`;
}
