/** The view's records elsewhere: CSV and NDJSON downloads, and the same query as curl, Python and pandas. */
import { html, type Html } from '../render/html-template.js';
import { curlCommand, exportPath, pandasSnippet, pythonSnippet, type ViewQuery } from './snippets.js';

export function exportsPanel(query: ViewQuery, baseUrl: string): Html {
  const snippet = (title: string, text: string, id: string) =>
    html`<details><summary>${title}</summary><pre data-testid="${id}">${text}</pre></details>`;
  return html`<section class="panel" data-testid="exports"><h2>This view elsewhere</h2><p>Download: <a href="${exportPath(query, 'csv')}" data-testid="csv-link" download>CSV</a> · <a href="${exportPath(query, 'ndjson')}" data-testid="ndjson-link" download>NDJSON</a> · <a href="${exportPath(query, 'json').replace('format=json', 'format=api')}">in the browsable API</a></p>${snippet('curl', curlCommand(query, baseUrl), 'curl-snippet')}${snippet('Python (cybercom client)', pythonSnippet(query), 'python-snippet')}${snippet('pandas.read_csv of a signed link', pandasSnippet(query), 'pandas-snippet')}</section>\n`;
}
